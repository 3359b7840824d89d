// passk-gotest: `go test -c` for a test package's files, without the go command's per-build package loading.
//
//	passk-gotest IMPORTCFG OUTPUT FILE...
//
// Builds what `go test -c -vet=off -o OUTPUT FILE...` builds (GOPATH mode, package
// "command-line-arguments"): the files' package compiled by the compiler, the test main the go command
// would generate for it (cmd/go/internal/load/test.go's template, for tests and a TestMain only), both
// linked against the packages listed in IMPORTCFG (std, testify and passk/wire, compiled at image build
// time), with -s -w. The test functions are found with cmd/go's own rules (isTest, isTestFunc,
// checkTestFunc), file by file in the order given.
//
// Exit status 3 (nothing printed): the files are outside what this fast path reproduces exactly (a parse
// or type error, files of different packages, an import not in IMPORTCFG, benchmarks, fuzz targets,
// examples, a test with the wrong signature, no TestMain...); the caller then runs `go test -c` itself,
// whose result and diagnostics are the reference. Any other failure of a step is reported the same way.
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const pkgPath = "command-line-arguments"

// The directory of the intermediate files, removed on every way out.
var dir string

func fallback(why string) {
	if os.Getenv("PASSK_GOTEST_DEBUG") != "" {
		fmt.Fprintln(os.Stderr, "passk-gotest:", why)
	}
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(3)
}

// From cmd/go/internal/load/test.go (Go 1.19).
func isTestFunc(fn *ast.FuncDecl, arg string) bool {
	if fn.Type.Results != nil && len(fn.Type.Results.List) > 0 ||
		fn.Type.Params.List == nil ||
		len(fn.Type.Params.List) != 1 ||
		len(fn.Type.Params.List[0].Names) > 1 {
		return false
	}
	ptr, ok := fn.Type.Params.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	if name, ok := ptr.X.(*ast.Ident); ok && name.Name == arg {
		return true
	}
	if sel, ok := ptr.X.(*ast.SelectorExpr); ok && sel.Sel.Name == arg {
		return true
	}
	return false
}

func isTest(name, prefix string) bool {
	if !strings.HasPrefix(name, prefix) {
		return false
	}
	if len(name) == len(prefix) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(name[len(prefix):])
	return !unicode.IsLower(r)
}

func run(argv ...string) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fallback(fmt.Sprintf("%v: %v: %s", argv[0], err, out))
	}
}

func writeCfg(path string, extra []string, lines []string) {
	text := strings.Join(append(extra, lines...), "\n") + "\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		fallback(err.Error())
	}
}

func main() {
	if len(os.Args) < 4 {
		fallback("usage: passk-gotest IMPORTCFG OUTPUT FILE...")
	}
	cfgPath, output, names := os.Args[1], os.Args[2], os.Args[3:]
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			fallback("parse: " + err.Error())
		}
		if len(files) > 0 && f.Name.Name != files[0].Name.Name {
			fallback("files of different packages")
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			fallback("external test package")
		}
		// Build constraints (which the go command applies and the compiler does not see).
		for _, group := range f.Comments {
			for _, comment := range group.List {
				if strings.HasPrefix(comment.Text, "//go:build") || strings.HasPrefix(comment.Text, "// +build") {
					fallback("build constraint")
				}
			}
		}
		files = append(files, f)
	}
	// The packages this image holds compiled.
	known := map[string]bool{}
	var cfg []string
	handle, err := os.Open(cfgPath)
	if err != nil {
		fallback(err.Error())
	}
	scanner := bufio.NewScanner(handle)
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "packagefile ") {
			known[strings.SplitN(strings.TrimPrefix(line, "packagefile "), "=", 2)[0]] = true
			cfg = append(cfg, line)
		}
	}
	handle.Close()
	for _, f := range files {
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			if err != nil || !known[path] || path == "C" || strings.HasPrefix(path, ".") {
				fallback("import " + spec.Path.Value)
			}
		}
	}
	// The tests, as cmd/go's testFuncs.load finds them; anything else goes to `go test`.
	var tests []string
	testMain := false
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil {
				continue
			}
			name := fn.Name.String()
			generic := fn.Type.TypeParams.NumFields() > 0
			switch {
			case name == "TestMain":
				if isTestFunc(fn, "T") || !isTestFunc(fn, "M") || generic || testMain {
					fallback("TestMain")
				}
				testMain = true
			case isTest(name, "Test"):
				if !isTestFunc(fn, "T") || generic {
					fallback("signature of " + name)
				}
				tests = append(tests, name)
			case strings.HasPrefix(name, "Benchmark"), strings.HasPrefix(name, "Fuzz"), strings.HasPrefix(name, "Example"):
				fallback(name)
			}
		}
	}
	if !testMain {
		fallback("no TestMain")
	}
	dir, err = os.MkdirTemp(".", ".passk-gotest-")
	if err != nil {
		fallback(err.Error())
	}
	defer os.RemoveAll(dir)
	tool := filepath.Join(runtime.GOROOT(), "pkg", "tool", runtime.GOOS+"_"+runtime.GOARCH)
	version := runtime.Version()
	cwd, _ := os.Getwd()
	pkgA, mainA, mainGo := filepath.Join(dir, "pkg.a"), filepath.Join(dir, "main.a"), filepath.Join(dir, "_testmain.go")
	writeCfg(filepath.Join(dir, "importcfg"), nil, cfg)
	compile := []string{filepath.Join(tool, "compile"), "-o", pkgA, "-p", pkgPath, "-complete", "-goversion", version,
		"-c=2", "-D", "_" + cwd, "-importcfg", filepath.Join(dir, "importcfg"), "-pack"}
	run(append(compile, names...)...)
	// cmd/go's test main for tests and a TestMain (its template with nothing else in it).
	var src strings.Builder
	src.WriteString("\n// Code generated by 'go test'. DO NOT EDIT.\n\npackage main\n\nimport (\n\t\"os\"\n\n\t\"reflect\"\n\n" +
		"\t\"testing\"\n\t\"testing/internal/testdeps\"\n\n\n\t_test \"" + pkgPath + "\"\n\n\n\n)\n\nvar tests = []testing.InternalTest{\n")
	for _, name := range tests {
		src.WriteString("\n\t{\"" + name + "\", _test." + name + "},\n")
	}
	src.WriteString("\n}\n\nvar benchmarks = []testing.InternalBenchmark{\n\n}\n\nvar fuzzTargets = []testing.InternalFuzzTarget{\n\n}\n\n" +
		"var examples = []testing.InternalExample{\n\n}\n\nfunc init() {\n\ttestdeps.ImportPath = \"\"\n}\n\n\n\nfunc main() {\n\n" +
		"\tm := testing.MainStart(testdeps.TestDeps{}, tests, benchmarks, fuzzTargets, examples)\n\n\t_test.TestMain(m)\n" +
		"\tos.Exit(int(reflect.ValueOf(m).Elem().FieldByName(\"exitCode\").Int()))\n\n}\n\n")
	if err := os.WriteFile(mainGo, []byte(src.String()), 0o600); err != nil {
		fallback(err.Error())
	}
	own := []string{"packagefile " + pkgPath + "=" + pkgA}
	writeCfg(filepath.Join(dir, "importcfg.main"), own, cfg)
	run(filepath.Join(tool, "compile"), "-o", mainA, "-p", "main", "-complete", "-goversion", version, "-c=2",
		"-nolocalimports", "-importcfg", filepath.Join(dir, "importcfg.main"), "-pack", mainGo)
	writeCfg(filepath.Join(dir, "importcfg.link"), append([]string{"packagefile " + pkgPath + ".test=" + mainA}, own...), cfg)
	run(filepath.Join(tool, "link"), "-s", "-w", "-o", output, "-importcfg", filepath.Join(dir, "importcfg.link"),
		"-buildmode=exe", "-extld=gcc", mainA)
}
