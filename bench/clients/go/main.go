// Command clients-load: the Go load generators of bench/clients_bench.sh:
// roost's Go client (roost.dev/roost) against a roost cluster, or go-redis
// (github.com/redis/go-redis/v9) against Redis, under one of two closed
// loops on the pairs of bench/text_pairs.h:
//
//	-workload get       -in-flight goroutines, each one single-key Get at a
//	                    time (roost: Options.CoalesceGets, so concurrent
//	                    Gets of a shard go out together; Redis: GET over a
//	                    pool of -in-flight connections)
//	-workload multiget  -in-flight goroutines, each one MultiGet (Redis:
//	                    MGET) of -batch keys at a time
//
// Keys are drawn uniformly from the first -keys pairs and every answer is
// checked: a miss or a wrong value is an error, and the exit status is 1
// when any call failed or was answered wrong. After -warmup seconds, calls
// that complete within the next -duration seconds are measured. One JSON
// line, with bench/closed_loop.h's names (qps: calls/s).
//
//	clients-load -client roost -layout cluster.json -keys 1000000 -workload get
//	clients-load -client redis -redis 127.0.0.1:6379 -keys 1000000 -workload multiget -in-flight 8
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"roost.dev/roost"
)

const valueSize = 100

// key and value: bench/text_pairs.h's pairs.
func key(i uint64) []byte {
	digits := strconv.FormatUint(i, 10)
	width := 8 + int(i%9)
	if len(digits) < width {
		digits = strings.Repeat("0", width-len(digits)) + digits
	}
	return []byte(digits)
}

func value(k []byte) []byte {
	v := make([]byte, 0, valueSize+len(k)+1)
	for len(v) < valueSize {
		v = append(v, k...)
		v = append(v, ':')
	}
	return v[:valueSize]
}

type counts struct {
	mu                           sync.Mutex
	latencies                    []float64 // seconds
	keys                         uint64
	rpcErrors, misses, badValues uint64
	firstError                   string
}

func (c *counts) fail(n *uint64, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*n++
	if c.firstError == "" {
		c.firstError = what
	}
}

// check: whether key #i's answer is its value.
func (c *counts) check(i uint64, found bool, got []byte) bool {
	if !found {
		c.fail(&c.misses, fmt.Sprintf("key #%d answered as absent", i))
		return false
	}
	if !bytes.Equal(got, value(key(i))) {
		c.fail(&c.badValues, fmt.Sprintf("key #%d answered a wrong value", i))
		return false
	}
	return true
}

// lookup asks for keys; found and values in request order.
type lookup func(ctx context.Context, keys [][]byte) ([]bool, [][]byte, error)

func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()).Seconds()
}

func main() {
	client := flag.String("client", "", "roost or redis")
	layout := flag.String("layout", "", "roost: the cluster layout file")
	table := flag.String("table", "bench", "roost: the table")
	redisAddr := flag.String("redis", "", "redis: HOST:PORT")
	nKeys := flag.Uint64("keys", 0, "the first N pairs are loaded")
	workload := flag.String("workload", "", "get or multiget")
	inFlight := flag.Int("in-flight", 64, "goroutines, each one call at a time")
	batch := flag.Int("batch", 100, "keys per multiget")
	duration := flag.Float64("duration", 10, "measured seconds")
	warmup := flag.Float64("warmup", 2, "seconds of load before measuring")
	seed := flag.Uint64("seed", 20261122, "the key schedule's seed")
	flag.Parse()
	usage := func(what string) {
		fmt.Fprintf(os.Stderr, "clients-load: %s\n", what)
		os.Exit(2)
	}
	if *nKeys == 0 || *nKeys > 100000000 || *inFlight < 1 || *batch < 1 {
		usage("-keys (1 to 10^8), -in-flight and -batch must be positive")
	}
	if *workload != "get" && *workload != "multiget" {
		usage("-workload must be get or multiget")
	}
	if *workload == "get" {
		*batch = 1
	}

	var do lookup
	switch *client {
	case "roost":
		c, err := roost.Open(*layout, roost.Options{CoalesceGets: true})
		if err != nil {
			usage(err.Error())
		}
		defer c.Close()
		if *workload == "get" {
			do = func(ctx context.Context, keys [][]byte) ([]bool, [][]byte, error) {
				r, err := c.Get(ctx, *table, keys[0])
				return []bool{r.Found}, [][]byte{r.Value}, err
			}
		} else {
			do = func(ctx context.Context, keys [][]byte) ([]bool, [][]byte, error) {
				r, err := c.MultiGet(ctx, *table, keys)
				if err != nil {
					return nil, nil, err
				}
				found := make([]bool, len(r.Results))
				values := make([][]byte, len(r.Results))
				for i, x := range r.Results {
					found[i], values[i] = x.Found, x.Value
				}
				return found, values, nil
			}
		}
	case "redis":
		r := redis.NewClient(&redis.Options{Addr: *redisAddr, PoolSize: *inFlight,
			MinIdleConns: *inFlight})
		defer r.Close()
		if *workload == "get" {
			do = func(ctx context.Context, keys [][]byte) ([]bool, [][]byte, error) {
				v, err := r.Get(ctx, string(keys[0])).Bytes()
				if err == redis.Nil {
					return []bool{false}, [][]byte{nil}, nil
				}
				return []bool{err == nil}, [][]byte{v}, err
			}
		} else {
			do = func(ctx context.Context, keys [][]byte) ([]bool, [][]byte, error) {
				args := make([]string, len(keys))
				for i, k := range keys {
					args[i] = string(k)
				}
				vs, err := r.MGet(ctx, args...).Result()
				if err != nil {
					return nil, nil, err
				}
				found := make([]bool, len(vs))
				values := make([][]byte, len(vs))
				for i, v := range vs {
					if s, ok := v.(string); ok {
						found[i], values[i] = true, []byte(s)
					}
				}
				return found, values, nil
			}
		}
	default:
		usage("-client must be roost or redis")
	}

	var c counts
	started := time.Now()
	from := started.Add(time.Duration(*warmup * float64(time.Second)))
	to := from.Add(time.Duration(*duration * float64(time.Second)))
	var wg sync.WaitGroup
	for g := 0; g < *inFlight; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(g)))
			numbers := make([]uint64, *batch)
			keys := make([][]byte, *batch)
			var mine []float64
			var keysDone uint64
			for time.Now().Before(to) {
				for i := range keys {
					numbers[i] = rng.Uint64N(*nKeys)
					keys[i] = key(numbers[i])
				}
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				found, values, err := do(ctx, keys)
				cancel()
				end := time.Now()
				if err != nil {
					c.fail(&c.rpcErrors, err.Error())
					continue
				}
				if len(found) != len(keys) {
					c.fail(&c.rpcErrors, fmt.Sprintf("%d answers to %d keys", len(found), len(keys)))
					continue
				}
				ok := true
				for i := range keys {
					ok = c.check(numbers[i], found[i], values[i]) && ok
				}
				if ok && !start.Before(from) && !end.After(to) {
					mine = append(mine, end.Sub(start).Seconds())
					keysDone += uint64(len(keys))
				}
			}
			c.mu.Lock()
			c.latencies = append(c.latencies, mine...)
			c.keys += keysDone
			c.mu.Unlock()
		}(g)
	}
	time.Sleep(time.Until(from))
	cpu0 := cpuSeconds()
	time.Sleep(time.Until(to))
	cpu1 := cpuSeconds()
	wg.Wait()

	sort.Float64s(c.latencies)
	pct := func(q float64) float64 {
		if len(c.latencies) == 0 {
			return 0
		}
		i := int(q * float64(len(c.latencies)))
		if i >= len(c.latencies) {
			i = len(c.latencies) - 1
		}
		return math.Round(c.latencies[i]*1e7) / 10
	}
	line, _ := json.Marshal(map[string]any{
		"method": *workload, "concurrency": *inFlight, "batch": *batch,
		"seconds": *duration, "rpcs": len(c.latencies), "keys": c.keys,
		"qps":        float64(len(c.latencies)) / *duration,
		"keys_per_s": float64(c.keys) / *duration,
		"p50_us":     pct(0.50), "p99_us": pct(0.99),
		"rpc_errors": c.rpcErrors, "misses": c.misses, "bad_values": c.badValues,
		"client_cpu_s": math.Round((cpu1-cpu0)*1000) / 1000, "first_error": c.firstError,
	})
	fmt.Println(string(line))
	if c.firstError != "" {
		fmt.Fprintf(os.Stderr, "clients-load: %s\n", c.firstError)
		os.Exit(1)
	}
	if len(c.latencies) == 0 {
		fmt.Fprintln(os.Stderr, "clients-load: no call completed in the measured window")
		os.Exit(1)
	}
}
