package roost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestParseLayout(t *testing.T) {
	l, err := ParseLayout([]byte(`{"shards": [["a:1", "b:2"], ["dns:///c.svc:3"]],
		"tls": {"ca": "ca.pem", "cert": "/abs/client.pem", "key": "client.key", "server_name": "roost.internal"}}`), "/etc/roost")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Shards) != 2 || l.Shards[0][1] != "b:2" || l.Shards[1][0] != "dns:///c.svc:3" {
		t.Fatalf("shards %v", l.Shards)
	}
	want := TLSConfig{CA: "/etc/roost/ca.pem", Cert: "/abs/client.pem", Key: "/etc/roost/client.key", ServerName: "roost.internal"}
	if l.TLS == nil || *l.TLS != want {
		t.Fatalf("tls %+v, want %+v", l.TLS, want)
	}
	if l, err := ParseLayout([]byte(`{"shards": [["a:1"]]}`), ""); err != nil || l.TLS != nil {
		t.Fatalf("no tls: %+v, %v", l, err)
	}
	if l, err := ParseLayout([]byte(`{"shards": [["a:1"]], "tls": {}}`), ""); err != nil || l.TLS == nil || *l.TLS != (TLSConfig{}) {
		t.Fatalf("empty tls (the system's CAs): %+v, %v", l, err)
	}
}

// Every malformed layout is InvalidArgument naming what is wrong.
func TestParseLayoutRefuses(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{`{"shards": [["a:1"]], "tsl": {}}`, `unknown member "tsl"`},
		{`{"shards": [["a:1"]], "tls": {"ca": "x", "sever_name": "y"}}`, `unknown member "tls.sever_name"`},
		{`{"shards": [["a:1"]], "tls": {"cert": "c.pem"}}`, "tls.cert and tls.key go together"},
		{`{"shards": [["a:1"]], "tls": {"ca": ""}}`, "tls.ca is empty"},
		{`{"shards": [["a:1"]], "tls": {"ca": 7}}`, "tls.ca is not a string"},
		{`{"shards": [["a:1"]], "tls": []}`, `"tls" is not an object`},
		{`{"shards": []}`, "no shards"},
		{`{}`, `no "shards"`},
		{`{"shards": {}}`, `"shards" is not an array`},
		{`{"shards": ["a:1"]}`, "shards[0] is not an array of targets"},
		{`{"shards": [["a:1"], []]}`, "shard 1 has no replica"},
		{`{"shards": [["a:1"], ["b:1", 5]]}`, "shards[1][1] is not a string"},
		{`{"shards": [["a:1", ""]]}`, "shards[0][1] is empty"},
		{`[]`, "not a JSON object"},
		{`{"shards": [["a:1"]]} {}`, "text after the object"},
		{`{"shards": [["a:1"]`, "not JSON"},
		{`{"shards": [` + strings.Repeat(`["a:1"],`, 1024) + `["a:1"]]}`, "1025 shards, more than the 1024"},
	} {
		_, err := ParseLayout([]byte(c.text), "")
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "bad cluster layout: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60s: got %v, want %q", c.text, err, c.want)
		}
	}
	if _, err := New(Layout{}, Options{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("New of no shards: %v", err)
	}
}

func TestReadLayout(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(path, []byte(`{"shards": [["a:1"]], "tls": {"ca": "ca.pem"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLayout(path)
	if err != nil || l.TLS.CA != filepath.Join(dir, "ca.pem") {
		t.Fatalf("%+v, %v", l, err)
	}
	// The CA file does not exist: New names it.
	if _, err := New(l, Options{}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "ca.pem") {
		t.Fatalf("New with a missing CA: %v", err)
	}
	os.WriteFile(path, []byte(`{"shards": [["a:1"]], "extra": 1}`), 0o644)
	if _, err := ReadLayout(path); err == nil || !strings.HasPrefix(status.Convert(err).Message(), path+": bad cluster layout: unknown member") {
		t.Fatalf("got %v", err)
	}
	if _, err := Open(filepath.Join(dir, "none.json"), Options{}); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("a missing file: %v", err)
	}
}
