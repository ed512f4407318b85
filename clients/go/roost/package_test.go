package roost

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// package.sh's proxy files: a new module gets roost.dev@v0.0.1 from them
// with `go get` (GOPROXY=file://...) and runs the partition function.
func TestGoGetFromPackagedProxy(t *testing.T) {
	module := filepath.Join(repoRoot(t), "clients", "go")
	proxy := t.TempDir()
	if out, err := exec.Command(filepath.Join(module, "package.sh"), "v0.0.1", proxy).CombinedOutput(); err != nil {
		t.Fatalf("package.sh: %v\n%s", err, out)
	}
	dir := t.TempDir()
	main := "package main\n\nimport (\n\t\"fmt\"\n\n\t\"roost.dev/roost\"\n)\n\nfunc main() { fmt.Println(roost.PartitionOf([]byte(\"user1\"), 7)) }\n"
	sum, err := os.ReadFile(filepath.Join(module, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"main.go": main, "go.mod": "module example.com/user\n\ngo 1.26\n", "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	upstream, _ := exec.Command("go", "env", "GOPROXY").Output()
	env := append(os.Environ(), "GOPROXY=file://"+proxy+","+strings.TrimSpace(string(upstream)),
		"GONOSUMDB=roost.dev", "GOFLAGS=-mod=mod")
	var output string
	for _, args := range [][]string{{"get", "roost.dev@v0.0.1"}, {"run", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		output = string(out)
	}
	if strings.TrimSpace(output) != "5" {
		t.Fatalf("the program printed %q, want 5 (docs/format/partitioning.md)", output)
	}
}
