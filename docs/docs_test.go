package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brine-kv/brine/internal/gomodtest"
)

// The info strings a fence of the README or of a page may carry; any other fails the test, so
// every block is one of these:
//
//	go                  a whole program (package main): built against this module and run (exit 0)
//	go norun            a whole program that needs a server: built, not run
//	go excerpt=PATH     lines of a compiled Go file of this repository (an Example): every non-blank
//	                    line of the block, trimmed, occurs in PATH, in the same order
//	sh                  commands run by sh -e in a temporary directory (one per page, blocks in
//	                    order), with the brine binary built from this tree on PATH; must exit 0
//	sh noexec           commands that need a server: not run, but a brine command must name a known
//	                    subcommand and known flags, a make target must exist in the Makefiles, and
//	                    a script or package path must exist
//	text                not code (diagrams, figures, sample output)
//	text output         the exact standard output of the sh or go block just before it
//	yaml                a YAML file (a Kubernetes manifest): every document must parse, and a
//	                    command or args list that starts with brine is checked as sh noexec's are
const (
	kindGo      = "go"
	kindGoNoRun = "go norun"
	kindExcerpt = "go excerpt="
	kindSh      = "sh"
	kindNoExec  = "sh noexec"
	kindText    = "text"
	kindOutput  = "text output"
	kindYAML    = "yaml"
)

// block is one fenced code block.
type block struct {
	file string // relative to the repository root
	line int    // of the opening fence
	info string
	body string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// name is a directory name for the block, unique within the run.
func (b block) name() string {
	base := strings.TrimSuffix(filepath.Base(b.file), ".md")
	return fmt.Sprintf("%s_L%d", strings.ToLower(base), b.line)
}

var (
	fenceRE = regexp.MustCompile("^\\s*```")
	linkRE  = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
)

// pages returns the README and every page of docs/, relative to the repository root.
func pages(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no pages in docs/")
	}
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, filepath.Join("docs", f))
	}
	return out
}

// parse returns the fenced blocks of a Markdown file. Fences must start at column 0 and close
// with a bare ``` line.
func parse(t *testing.T, file, text string) []block {
	t.Helper()
	var out []block
	var cur *block
	var body []string
	for i, l := range strings.Split(text, "\n") {
		if !fenceRE.MatchString(l) {
			if cur != nil {
				body = append(body, l)
			}
			continue
		}
		if !strings.HasPrefix(l, "```") {
			t.Errorf("%s:%d: indented fence; fences start at column 0", file, i+1)
			continue
		}
		if cur == nil {
			cur = &block{file: file, line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(l, "```"))}
			body = nil
			continue
		}
		if l != "```" {
			t.Errorf("%s:%d: a closing fence is a bare ``` line", file, i+1)
		}
		cur.body = strings.Join(body, "\n") + "\n"
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		t.Errorf("%s: unclosed fence", cur)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestPages checks the pages' shape: each page of docs/ opens with a title and one sentence,
// links back to the README and is linked from it, and every relative link resolves.
func TestPages(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, filepath.Dir(p), target)); err != nil {
				t.Errorf("%s: broken link %s", p, target)
			}
		}
		if p == "README.md" {
			continue
		}
		lines := strings.Split(string(text), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# ") || lines[1] != "" ||
			!strings.Contains(lines[2], ". ") && !strings.HasSuffix(lines[2], ".") {
			t.Errorf("%s: a page starts with a '# Title', a blank line and one sentence saying what it covers", p)
		}
		if !strings.Contains(string(text), "](../README.md") {
			t.Errorf("%s: no link back to ../README.md", p)
		}
		if !strings.Contains(string(readme), "]("+filepath.ToSlash(p)+")") {
			t.Errorf("README.md does not link to %s", p)
		}
	}
}

// TestCodeBlocks builds and runs the blocks of the README and the pages (see the kinds above).
func TestCodeBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs and a brine binary")
	}
	root := repoRoot(t)
	var programs, runnable []block
	shell := map[string][]block{} // runnable sh blocks and their outputs, per page
	var noexec, yamls []block
	outputs := map[string]block{} // a program's expected output, by the program's position
	for _, p := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		var prev block
		for _, b := range parse(t, p, string(text)) {
			if b.info == kindOutput && prev.info == kindGo {
				outputs[prev.String()] = b
				prev = b
				continue
			}
			prev = b
			switch {
			case b.info == kindGo || b.info == kindGoNoRun:
				if !strings.HasPrefix(b.body, "package main\n") {
					t.Errorf("%s: a ```%s block is a whole program (package main); an excerpt of an Example is ```go excerpt=PATH", b, b.info)
					continue
				}
				programs = append(programs, b)
				if b.info == kindGo {
					runnable = append(runnable, b)
				}
			case strings.HasPrefix(b.info, kindExcerpt):
				checkExcerpt(t, root, b)
			case b.info == kindSh || b.info == kindOutput:
				shell[p] = append(shell[p], b)
			case b.info == kindNoExec:
				noexec = append(noexec, b)
			case b.info == kindYAML:
				yamls = append(yamls, b)
			case b.info == kindText:
			default:
				t.Errorf("%s: fence info %q is none of go, go norun, go excerpt=PATH, sh, sh noexec, text, text output, yaml", b, b.info)
			}
		}
	}

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err := gomodtest.Download(ctx, root)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	// The brine binary, built once, for the sh blocks and the noexec checks.
	if !goCmd(t, root, 3*time.Minute, nil, "build", "-o", filepath.Join(bin, "brine"), "./cmd/brine") {
		t.FailNow()
	}
	brine := &brineHelp{bin: filepath.Join(bin, "brine"), help: map[string]string{}}

	if len(programs) > 0 && buildPrograms(t, root, filepath.Join(tmp, "programs"), bin, programs) {
		for _, b := range runnable {
			t.Run(b.name(), func(t *testing.T) {
				dir := t.TempDir()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				cmd := exec.CommandContext(ctx, filepath.Join(bin, b.name()))
				cmd.Dir = dir
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: the program failed: %v\n%s%s", b, err, out, stderr.Bytes())
				}
				if want, ok := outputs[b.String()]; ok {
					if got := strings.TrimRight(string(out), "\n"); got != strings.TrimRight(want.body, "\n") {
						t.Errorf("%s: the output of %s differs; it is:\n%s", want, b, got)
					}
				}
			})
		}
	}

	for p, blocks := range shell {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			runShell(t, bin, blocks)
		})
	}

	for _, b := range noexec {
		checkNoExec(t, root, brine, b)
	}
	for _, b := range yamls {
		checkYAML(t, brine, b)
	}
}

// checkYAML parses every document of a YAML block and checks the brine command lines in it: a
// command or args list whose first word is brine (a container's command, as Kubernetes runs it).
func checkYAML(t *testing.T, brine *brineHelp, b block) {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(b.body))
	found := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if list, ok := x.([]any); ok && (k == "command" || k == "args") && len(list) > 0 {
					var words []string
					for _, a := range list {
						words = append(words, fmt.Sprint(a))
					}
					if words[0] == "brine" {
						checkBrine(t, brine, brine.commands(), b, words[1:])
						found++
					} else if k == "args" { // a script's lines (command: [sh, -c])
						for _, line := range commandLines(strings.Join(words, "\n")) {
							for len(line) > 1 && (line[0] == "if" || line[0] == "then" || line[0] == "exec") {
								line = line[1:]
							}
							if line[0] == "brine" {
								checkBrine(t, brine, brine.commands(), b, line[1:])
								found++
							}
						}
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s: not YAML: %v", b, err)
			return
		}
		walk(doc)
	}
	if found == 0 && strings.Contains(b.body, "brine ") {
		t.Errorf("%s: a brine command in it that is no command or args list", b)
	}
}

// checkExcerpt checks that the block's lines occur, in order, among the lines of the Go file it
// names.
func checkExcerpt(t *testing.T, root string, b block) {
	t.Helper()
	path := strings.TrimPrefix(b.info, kindExcerpt)
	if !strings.HasSuffix(path, ".go") {
		t.Errorf("%s: an excerpt names a Go file of this repository, not %q", b, path)
		return
	}
	src, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Errorf("%s: %v", b, err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		lines = append(lines, strings.TrimSpace(l))
	}
	i := 0
	for n, l := range strings.Split(b.body, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		for i < len(lines) && lines[i] != l {
			i++
		}
		if i == len(lines) {
			t.Errorf("%s: line %d of the excerpt is not in %s (after the lines before it): %s", b, n+1, path, l)
			return
		}
		i++
	}
}

// goCmd runs the go command offline (every module the blocks need is in the module cache) and
// reports whether it succeeded.
func goCmd(t *testing.T, dir string, timeout time.Duration, extraEnv []string, args ...string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if out, err := gomodtest.Go(ctx, dir, extraEnv, args...); err != nil {
		t.Errorf("%v\n%s", err, out)
		return false
	}
	return true
}

// buildPrograms writes each program to a directory of its own in one temporary module that
// requires this one (replaced by the working tree), vets them all and builds them into bin, each
// binary named after its block; it reports whether they all built.
func buildPrograms(t *testing.T, root, dir, bin string, programs []block) bool {
	t.Helper()
	files := map[string]string{}
	for _, b := range programs {
		files[filepath.Join(b.name(), "main.go")] = fmt.Sprintf("// From %s.\n\n%s", b, b.body)
	}
	if err := gomodtest.Write(root, dir, "doccheck", files); err != nil {
		t.Fatal(err)
	}
	env := []string{gomodtest.ModuleFlags}
	return goCmd(t, dir, 3*time.Minute, env, "vet", "./...") &&
		goCmd(t, dir, 3*time.Minute, env, "build", "-o", bin+string(filepath.Separator), "./...")
}

// runShell runs a page's sh blocks in order in one directory, and compares a ```text output
// block with the standard output of the block before it.
func runShell(t *testing.T, bin string, blocks []block) {
	dir := t.TempDir()
	var last *block
	var lastOut string
	for _, b := range blocks {
		if b.info == kindOutput {
			if last == nil {
				t.Errorf("%s: a ```text output block follows the ```sh block whose output it is", b)
				continue
			}
			if got := strings.TrimRight(lastOut, "\n"); got != strings.TrimRight(b.body, "\n") {
				t.Errorf("%s: the output of %s differs; it is:\n%s", b, last, got)
			}
			last = nil
			continue
		}
		if w := unsafeCommand(b.body); w != "" {
			t.Errorf("%s: %q may not run here: a ```sh block runs brine and %s only; mark a block that needs a server ```sh noexec", b, w, strings.Join(slices.Sorted(maps.Keys(shellAllowed)), ", "))
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-e", "-c", b.body)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\nstdout:\n%s\nstderr:\n%s", b, err, stdout.String(), stderr.String())
		}
		last, lastOut = &b, stdout.String()
	}
}

// shellAllowed are the commands besides brine that a runnable block may use: nothing that starts
// servers or touches files outside its directory.
var shellAllowed = map[string]bool{"printf": true, "echo": true, "cat": true, "grep": true, "wc": true, "test": true, "ls": true}

// unsafeCommand returns the first command of body that a runnable block may not run, or "".
func unsafeCommand(body string) string {
	for _, words := range commandLines(body) {
		if words[0] != "brine" && !shellAllowed[words[0]] {
			return words[0]
		}
		for _, w := range words {
			if strings.HasPrefix(w, "--store=") && !strings.HasPrefix(w, "--store=local://") ||
				strings.HasPrefix(w, "hbase://") || strings.HasPrefix(w, "tablestore") || strings.Contains(w, "..") {
				return w
			}
		}
	}
	return ""
}

// brineHelp caches the usage texts of the brine binary.
type brineHelp struct {
	bin  string
	help map[string]string
}

func (h *brineHelp) usage(args ...string) string {
	key := strings.Join(args, " ")
	if u, ok := h.help[key]; ok {
		return u
	}
	// A usage request exits non-zero on some commands; the text is what counts.
	out, _ := exec.Command(h.bin, append(args, "-h")...).CombinedOutput()
	h.help[key] = string(out)
	return string(out)
}

// commands returns brine's subcommands, from its usage text.
func (h *brineHelp) commands() map[string]bool {
	out, _ := exec.Command(h.bin, "-h").CombinedOutput()
	cmds := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)  `).FindAllStringSubmatch(string(out), -1) {
		cmds[m[1]] = true
	}
	return cmds
}

// checkNoExec checks the commands of a block it does not run.
func checkNoExec(t *testing.T, root string, brine *brineHelp, b block) {
	t.Helper()
	cmds := brine.commands()
	if len(cmds) < 5 {
		t.Fatalf("brine -h lists %d commands", len(cmds))
	}
	for _, words := range commandLines(b.body) {
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			words = words[1:] // VAR=value before a command
		}
		if len(words) == 0 {
			continue
		}
		switch {
		case words[0] == "brine":
			checkBrine(t, brine, cmds, b, words[1:])
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/brine":
			checkBrine(t, brine, cmds, b, words[3:])
		case words[0] == "make":
			mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
			mkh, _ := os.ReadFile(filepath.Join(root, "Makefile.hbase"))
			for _, w := range words[1:] {
				if strings.Contains(w, "=") {
					continue
				}
				re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(w) + `:`)
				if !re.Match(mk) && !re.Match(mkh) {
					t.Errorf("%s: make target %q is not in Makefile or Makefile.hbase", b, w)
				}
			}
		case words[0] == "go":
			for _, w := range words[1:] {
				if strings.HasPrefix(w, "./") {
					if _, err := os.Stat(filepath.Join(root, strings.TrimSuffix(w, "/..."))); err != nil {
						t.Errorf("%s: %s names no directory of this repository", b, w)
					}
				}
			}
		case words[0] == "docker-compose" || words[0] == "docker" && len(words) > 1 && (words[1] == "compose" || words[1] == "volume"):
			checkCompose(t, root, b, words)
		case strings.Contains(words[0], "/"):
			if _, err := os.Stat(filepath.Join(root, words[0])); err != nil {
				t.Errorf("%s: %s is not a file of this repository", b, words[0])
			}
		default:
			t.Logf("%s: not checked: %s", b, strings.Join(words, " "))
		}
	}
}

// checkCompose checks a compose or docker volume command line against docker-compose.yml: every
// service it names is one of the file's services, every volume one of its volumes (named as compose
// names them in the project brine of .env).
func checkCompose(t *testing.T, root string, b block, words []string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	section := func(name string) map[string]bool { // the top-level keys under name:
		keys := map[string]bool{}
		in := false
		for _, line := range strings.Split(string(raw), "\n") {
			switch {
			case line == name+":":
				in = true
			case in && len(line) > 0 && line[0] != ' ' && line[0] != '#':
				in = false
			case in && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(line, ":"):
				keys[strings.TrimSuffix(strings.TrimSpace(line), ":")] = true
			}
		}
		return keys
	}
	if words[0] == "docker" && words[1] == "volume" {
		vols := section("volumes")
		for _, w := range words[3:] {
			if name, ok := strings.CutPrefix(w, "brine_"); !ok || !vols[name] {
				t.Errorf("%s: %s is no volume of docker-compose.yml (project brine)", b, w)
			}
		}
		return
	}
	services := section("services")
	if len(services) == 0 {
		t.Fatal("docker-compose.yml: no services found")
	}
	args := words[1:]
	if words[0] == "docker" {
		args = words[2:]
	}
	verb := -1
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--profile":
			i++ // its value
		case strings.HasPrefix(args[i], "-"):
		case verb < 0:
			verb = i
		case !services[args[i]]:
			t.Errorf("%s: %q is no service of docker-compose.yml", b, args[i])
		}
	}
}

// checkBrine checks a brine command line: a known subcommand and flags its usage lists.
func checkBrine(t *testing.T, brine *brineHelp, cmds map[string]bool, b block, args []string) {
	t.Helper()
	if len(args) == 0 {
		t.Errorf("%s: brine without a command", b)
		return
	}
	if !cmds[args[0]] {
		t.Errorf("%s: brine has no command %q", b, args[0])
		return
	}
	help := []string{args[0]}
	if (args[0] == "periods" || args[0] == "index") && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		help = append(help, args[1])
	}
	usage := brine.usage(help...)
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(name) + `(\s|$)`).MatchString(usage) {
			t.Errorf("%s: brine %s has no flag -%s", b, strings.Join(help, " "), name)
		}
	}
}

// commandLines splits a shell block into commands, each a list of words: continuation lines
// joined, comments dropped, quotes removed, and ;, && and | separating commands.
func commandLines(body string) [][]string {
	body = strings.ReplaceAll(body, "\\\n", " ")
	var out [][]string
	for _, line := range strings.Split(body, "\n") {
		var words []string
		var w strings.Builder
		inWord, quote := false, byte(0)
		flush := func() {
			if inWord {
				words = append(words, w.String())
			}
			w.Reset()
			inWord = false
		}
	scan:
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				} else {
					w.WriteByte(c)
				}
			case c == '\'' || c == '"':
				quote, inWord = c, true
			case c == '#' && !inWord:
				break scan
			case c == ' ' || c == '\t':
				flush()
			default:
				w.WriteByte(c)
				inWord = true
			}
		}
		flush()
		var cmd []string
		for _, w := range words {
			if w == ";" || w == "&&" || w == "|" || w == "||" {
				if len(cmd) > 0 {
					out = append(out, cmd)
				}
				cmd = nil
				continue
			}
			cmd = append(cmd, w)
		}
		if len(cmd) > 0 {
			out = append(out, cmd)
		}
	}
	return out
}
