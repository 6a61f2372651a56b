//go:build ignore

// go_filedeps counts how the files of one Go package depend on each other: an edge A -> B where a file A uses a
// name declared in file B. An edge "points back up" where B also reaches A (the two files are in one cycle), so
// that neither can move to a package of its own without the other.
// Usage (from the repository root): tools/go.sh run "$PWD/tools/go_filedeps.go" [-v] [package dir, default .]
// (-v lists the dependencies that point back up).
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the edges that point back up")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, pkg := range pkgs {
		var files []*ast.File
		for _, f := range pkg.Files {
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
		tpkg, err := conf.Check(pkg.Name, fset, files, info)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		edges := map[[2]string]bool{}
		add := func(at token.Pos, obj types.Object) {
			if obj == nil || obj.Pkg() != tpkg || !obj.Pos().IsValid() {
				return
			}
			from, to := filepath.Base(fset.Position(at).Filename), filepath.Base(fset.Position(obj.Pos()).Filename)
			if from != to {
				edges[[2]string{from, to}] = true
			}
		}
		for id, obj := range info.Uses {
			add(id.Pos(), obj)
		}
		for sel, s := range info.Selections {
			add(sel.Sel.Pos(), s.Obj())
		}
		reach := func(from, to string) bool {
			seen, stack := map[string]bool{from: true}, []string{from}
			for len(stack) > 0 {
				n := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if n == to {
					return true
				}
				for e := range edges {
					if e[0] == n && !seen[e[1]] {
						seen[e[1]] = true
						stack = append(stack, e[1])
					}
				}
			}
			return false
		}
		var back []string
		for e := range edges {
			if reach(e[1], e[0]) {
				back = append(back, e[0]+" -> "+e[1])
			}
		}
		sort.Strings(back)
		fmt.Printf("package %s: %d files, %d file dependencies, %d pointing back up\n", pkg.Name, len(files),
			len(edges), len(back))
		if *verbose {
			fmt.Println(strings.Join(back, "\n"))
		}
	}
}
