package roost

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The committed gen/go/roost/v1/*.pb.go are what generate.sh makes of
// proto/roost/v1 today, byte for byte: a .proto changed without
// regenerating fails here. It needs protoc and the two Go plugins
// (generate.sh says how to install them) and fails without them.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	module := filepath.Join(repoRoot(t), "clients", "go")
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(module, "generate.sh"), out)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clients/go/generate.sh failed (%v): %s", err, output)
	}
	committed, _ := filepath.Glob(filepath.Join(module, "gen", "go", "roost", "v1", "*.go"))
	generated, _ := filepath.Glob(filepath.Join(out, "gen", "go", "roost", "v1", "*.go"))
	if len(generated) != 4 || len(committed) != len(generated) {
		t.Fatalf("generated %v, committed %v", generated, committed)
	}
	for _, g := range generated {
		name := filepath.Base(g)
		want, err := os.ReadFile(filepath.Join(module, "gen", "go", "roost", "v1", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("gen/go/roost/v1/%s differs from what clients/go/generate.sh makes now: run it", name)
		}
	}
}
