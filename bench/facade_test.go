package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	jkworkqueue "github.com/jobkit/jobkit/distinct/workqueue"
	"k8s.io/client-go/util/workqueue"
)

// Both are client-go work queues.
var (
	_ workqueue.TypedInterface[string] = (*jkworkqueue.Typed[string])(nil)
	//lint:ignore SA1019 the facade implements client-go's deprecated Interface on purpose
	_ workqueue.Interface = (*jkworkqueue.Type)(nil)
)

// TestClientGoQueueTestsPassOnFacade runs client-go's own queue tests
// (util/workqueue/queue_test.go of the client-go version in go.mod, read
// from the module cache) against distinct/workqueue, with only the import
// path changed: the file is copied into a temporary module that has this
// module's requirements and go.sum, and tested there with go test.
func TestClientGoQueueTestsPassOnFacade(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go test in a temporary module")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	modDir := goOutput(t, gobin, ".", "list", "-m", "-f", "{{.Dir}}", "k8s.io/client-go")
	src, err := os.ReadFile(filepath.Join(modDir, "util", "workqueue", "queue_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	const from, to = `"k8s.io/client-go/util/workqueue"`, `"github.com/jobkit/jobkit/distinct/workqueue"`
	if !bytes.Contains(src, []byte(from)) {
		t.Fatalf("client-go's queue_test.go does not import %s", from)
	}
	src = bytes.Replace(src, []byte(from), []byte(to), 1)

	root, err := filepath.Abs("..") // the jobkit module
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	mod := strings.Replace(string(gomod), "module github.com/jobkit/jobkit/bench", "module clientgoqueuetest", 1)
	mod = strings.Replace(mod, "=> ../", "=> "+root, 1)
	dir := t.TempDir()
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": gosum, "queue_test.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := goOutput(t, gobin, dir, "test", "-mod=mod", "-count=1", "-v", ".")
	tests := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`).FindAllSubmatch(src, -1)
	if len(tests) < 10 {
		t.Fatalf("found %d tests in client-go's queue_test.go", len(tests))
	}
	var summary []string
	for _, m := range tests {
		name := string(m[1])
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass:\n%s", name, out)
		}
		summary = append(summary, name)
	}
	t.Logf("client-go's %s passed against distinct/workqueue", strings.Join(summary, ", "))
}

// goOutput runs the go command in dir and returns its output, failing the
// test if it fails.
func goOutput(t *testing.T, gobin, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkQueue is client-go's BenchmarkQueue (util/workqueue/queue_test.go:
// one goroutine adds, gets and marks done 100 string keys, one at a time, on
// a new queue per op), run on client-go's queue and on distinct/workqueue.
// allocs/item is per key.
func BenchmarkQueue(b *testing.B) {
	keys := make([]string, 100)
	for idx := range keys {
		keys[idx] = fmt.Sprintf("key-%d", idx)
	}
	for _, impl := range []struct {
		name string
		new  func() workqueue.TypedInterface[string]
	}{
		{"clientgo", func() workqueue.TypedInterface[string] {
			return workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[string]{})
		}},
		{"workqueue", func() workqueue.TypedInterface[string] {
			return jkworkqueue.NewTypedWithConfig(jkworkqueue.TypedQueueConfig[string]{})
		}},
	} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			m0 := mallocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				q := impl.new()
				b.StartTimer()
				for j := 0; j < 100; j++ {
					q.Add(keys[j])
					key, _ := q.Get()
					q.Done(key)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(mallocs()-m0)/float64(100*b.N), "allocs/item")
		})
	}
}
