package roost

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// Every row of docs/format/partition_vectors.tsv: the hash and the shard
// for each shard count of its header.
func TestPartitionVectors(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "format", "partition_vectors.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	var counts []uint32
	rows, line := 0, 0
	for scanner.Scan() {
		line++
		text := scanner.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if counts == nil {
			if len(fields) < 3 || fields[0] != "key_hex" || fields[1] != "xxh3_64" {
				t.Fatalf("%s:%d: not the header: %q", path, line, text)
			}
			for _, f := range fields[2:] {
				n, err := strconv.ParseUint(f, 10, 32)
				if err != nil {
					t.Fatalf("%s:%d: shard count %q: %v", path, line, f, err)
				}
				counts = append(counts, uint32(n))
			}
			continue
		}
		if len(fields) != 2+len(counts) {
			t.Fatalf("%s:%d: %d fields, want %d", path, line, len(fields), 2+len(counts))
		}
		key, err := hex.DecodeString(fields[0])
		if err != nil {
			t.Fatalf("%s:%d: key: %v", path, line, err)
		}
		if got := strconv.FormatUint(xxh3.HashSeed(key, PartitionSeed), 16); strings.Repeat("0", 16-len(got))+got != fields[1] {
			t.Errorf("%s:%d: XXH3-64 = %s, want %s", path, line, got, fields[1])
		}
		for i, n := range counts {
			want, err := strconv.ParseUint(fields[2+i], 10, 32)
			if err != nil {
				t.Fatalf("%s:%d: shard %q: %v", path, line, fields[2+i], err)
			}
			if got := PartitionOf(key, n); uint64(got) != want {
				t.Errorf("%s:%d: key %s of %d shards: shard %d, want %d", path, line, fields[0], n, got, want)
			}
		}
		rows++
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 100 {
		t.Fatalf("%s: only %d rows of vectors", path, rows)
	}
	t.Logf("%d keys x %d shard counts checked", rows, len(counts))
}

// The worked examples of docs/format/partitioning.md.
func TestPartitionWorkedExamples(t *testing.T) {
	for _, c := range []struct {
		key            string
		of4, of7, of1k uint32
	}{{"", 2, 4, 704}, {"user1", 3, 5, 823}, {"\x00\xff", 0, 0, 137}, {"hello world", 2, 4, 577}} {
		k := []byte(c.key)
		if PartitionOf(k, 4) != c.of4 || PartitionOf(k, 7) != c.of7 || PartitionOf(k, 1000) != c.of1k || PartitionOf(k, 1) != 0 {
			t.Errorf("key %q: shards %d %d %d, want %d %d %d", c.key, PartitionOf(k, 4), PartitionOf(k, 7), PartitionOf(k, 1000), c.of4, c.of7, c.of1k)
		}
	}
}
