package roost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Layout says where a sharded table's replicas are: Shards[i] lists the
// gRPC targets of shard i's replicas ("host:port", or any gRPC target such
// as "dns:///NAME:PORT", every address NAME resolves to being a replica),
// in the partition function's shard order. TLS nil means plaintext.
//
// The layout file is the same JSON the C++ and Python clients read
// (docs/operations/cluster.md):
//
//	{"shards": [["127.0.0.1:7001", "127.0.0.1:7002"],
//	            ["127.0.0.1:7003", "dns:///roost-1.roost.svc:7000"]],
//	 "tls": {"ca": "ca.pem", "cert": "client.pem", "key": "client.key",
//	         "server_name": "roost.internal"}}
type Layout struct {
	Shards [][]string
	TLS    *TLSConfig
}

// TLSConfig is how to speak TLS to every replica. Each field is optional:
// CA is the PEM file of the CA(s) to check the servers against (empty: the
// system's), Cert and Key the client's certificate and key for mutual TLS
// (both or neither), ServerName the name the servers' certificates must
// hold (empty: the host of each target).
type TLSConfig struct {
	CA, Cert, Key, ServerName string
}

// MaxReplicas bounds the replicas per shard a layout may list (a sanity
// bound on a hand-written file, the C++ and Python clients' too).
const MaxReplicas = 1024

// A layout file is a few lines; anything larger is not one.
const maxLayoutFileSize = 16 << 20

func badLayout(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, "bad cluster layout: "+fmt.Sprintf(format, args...))
}

// Check returns an InvalidArgument error naming what is wrong with l: no
// shard, more than MaxShards, a shard without replicas, an empty target,
// a TLS certificate without its key.
func (l Layout) Check() error {
	if len(l.Shards) == 0 {
		return badLayout("no shards")
	}
	if len(l.Shards) > MaxShards {
		return badLayout("%d shards, more than the %d a table may have", len(l.Shards), MaxShards)
	}
	for s, replicas := range l.Shards {
		if len(replicas) == 0 {
			return badLayout("shard %d has no replica", s)
		}
		if len(replicas) > MaxReplicas {
			return badLayout("shard %d has %d replicas, more than %d", s, len(replicas), MaxReplicas)
		}
		for r, target := range replicas {
			if target == "" {
				return badLayout("shards[%d][%d] is empty", s, r)
			}
		}
	}
	if l.TLS != nil && (l.TLS.Cert == "") != (l.TLS.Key == "") {
		return badLayout("tls.cert and tls.key go together")
	}
	return nil
}

// ParseLayout parses a layout file's text. Relative file names in "tls"
// are taken from baseDir ("" for the working directory). Any member other
// than "shards" and "tls", in the file or in "tls", is refused: a misspelt
// "tls" ignored would quietly mean plaintext. Errors are InvalidArgument
// naming the member ("shards[1][0] is not a string").
func ParseLayout(text []byte, baseDir string) (Layout, error) {
	var top map[string]json.RawMessage
	if err := strictJSON(text, &top); err != nil {
		return Layout{}, err
	}
	if top == nil {
		return Layout{}, badLayout("not a JSON object")
	}
	for _, name := range sortedKeys(top) {
		if name != "shards" && name != "tls" {
			return Layout{}, badLayout("unknown member %q (known: \"shards\", \"tls\")", name)
		}
	}
	raw, ok := top["shards"]
	if !ok {
		return Layout{}, badLayout("no \"shards\"")
	}
	var shards []json.RawMessage
	if err := json.Unmarshal(raw, &shards); err != nil || shards == nil {
		return Layout{}, badLayout("\"shards\" is not an array")
	}
	var l Layout
	for s, r := range shards {
		var replicas []json.RawMessage
		if err := json.Unmarshal(r, &replicas); err != nil || replicas == nil {
			return Layout{}, badLayout("shards[%d] is not an array of targets", s)
		}
		targets := make([]string, 0, len(replicas))
		for i, t := range replicas {
			var target string
			if !isJSONString(t) || json.Unmarshal(t, &target) != nil {
				return Layout{}, badLayout("shards[%d][%d] is not a string", s, i)
			}
			targets = append(targets, target)
		}
		l.Shards = append(l.Shards, targets)
	}
	if raw, ok := top["tls"]; ok {
		tls, err := parseTLS(raw, baseDir)
		if err != nil {
			return Layout{}, err
		}
		l.TLS = tls
	}
	return l, l.Check()
}

func parseTLS(raw json.RawMessage, baseDir string) (*TLSConfig, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return nil, badLayout("\"tls\" is not an object")
	}
	for _, name := range sortedKeys(members) {
		if name != "ca" && name != "cert" && name != "key" && name != "server_name" {
			return nil, badLayout("unknown member \"tls.%s\" (known: ca, cert, key, server_name)", name)
		}
	}
	tls := &TLSConfig{}
	for _, f := range []struct {
		name string
		out  *string
		file bool
	}{{"ca", &tls.CA, true}, {"cert", &tls.Cert, true}, {"key", &tls.Key, true}, {"server_name", &tls.ServerName, false}} {
		v, ok := members[f.name]
		if !ok {
			continue
		}
		var s string
		if !isJSONString(v) || json.Unmarshal(v, &s) != nil {
			return nil, badLayout("tls.%s is not a string", f.name)
		}
		if s == "" {
			return nil, badLayout("tls.%s is empty", f.name)
		}
		if f.file && baseDir != "" && !filepath.IsAbs(s) {
			s = filepath.Join(baseDir, s)
		}
		*f.out = s
	}
	if (tls.Cert == "") != (tls.Key == "") {
		return nil, badLayout("tls.cert and tls.key go together")
	}
	return tls, nil
}

// ReadLayout reads and parses the layout file at path; relative TLS file
// names are its neighbours. Errors start with the path.
func ReadLayout(path string) (Layout, error) {
	l, err := readLayout(path)
	if err != nil {
		return Layout{}, status.Error(status.Code(err), path+": "+status.Convert(err).Message())
	}
	return l, nil
}

func readLayout(path string) (Layout, error) {
	f, err := os.Open(path)
	if err != nil {
		return Layout{}, status.Error(codes.InvalidArgument, err.Error())
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return Layout{}, status.Error(codes.InvalidArgument, "not a regular file")
	}
	text, err := io.ReadAll(io.LimitReader(f, maxLayoutFileSize+1))
	if err != nil {
		return Layout{}, status.Error(codes.InvalidArgument, err.Error())
	}
	if len(text) > maxLayoutFileSize {
		return Layout{}, status.Errorf(codes.InvalidArgument, "larger than %d bytes: not a layout", maxLayoutFileSize)
	}
	return ParseLayout(text, filepath.Dir(path))
}

// strictJSON decodes one JSON object and refuses anything after it.
func strictJSON(text []byte, out *map[string]json.RawMessage) error {
	d := json.NewDecoder(bytes.NewReader(text))
	if err := d.Decode(out); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok {
			return badLayout("not a JSON object")
		}
		return badLayout("not JSON: %v", err)
	}
	if d.More() {
		return badLayout("not JSON: text after the object")
	}
	if _, err := d.Token(); err != io.EOF {
		return badLayout("not JSON: text after the object")
	}
	return nil
}

func isJSONString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
