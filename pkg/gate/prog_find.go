package gate

// find: GNU find's command line, read as find reads it: leading options,
// starting points (paths it walks, inside the sandbox), then an expression
// of tests, actions and operators, each primary with the arguments it
// takes. Actions that run programs, delete, or write files are refused,
// as is following symbolic links (they lead out of the sandbox).

import (
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// findPrimary is one expression primary: how many arguments it takes and
// what they are.
type findPrimary struct {
	args    int  // fixed number of arguments; -1: up to ";" or "+" (-exec)
	role    Role // of the arguments
	refuse  string
	instead string
}

var findPrimaries = map[string]findPrimary{}

func init() {
	for _, p := range strings.Fields(`-true -false -print -print0 -ls -prune -quit -depth -d -mount -xdev
		-noleaf -ignore_readdir_race -noignore_readdir_race -daystart -nouser -nogroup -empty -readable
		-writable -executable -warn -nowarn -not -a -and -o -or ! ( ) , -help --help -version --version`) {
		findPrimaries[p] = findPrimary{}
	}
	for _, p := range strings.Fields(`-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname`) {
		findPrimaries[p] = findPrimary{args: 1, role: rolePattern}
	}
	for _, p := range strings.Fields(`-type -xtype -size -perm -user -group -uid -gid -links -inum -maxdepth
		-mindepth -mtime -atime -ctime -mmin -amin -cmin -used -fstype -regextype -context -printf`) {
		findPrimaries[p] = findPrimary{args: 1, role: roleText}
	}
	for _, p := range strings.Fields(`-newer -anewer -cnewer -samefile`) {
		findPrimaries[p] = findPrimary{args: 1, role: roleRead}
	}
	const runs = "runs a program on every file it finds"
	for _, p := range strings.Fields(`-exec -execdir -ok -okdir`) {
		findPrimaries[p] = findPrimary{args: -1, refuse: runs, instead: "list the files with find, then run the command on the names it printed"}
	}
	findPrimaries["-delete"] = findPrimary{refuse: "deletes every file it finds", instead: "list the files with find, then remove them with rm"}
	const writes = "writes its output to a file"
	for _, p := range strings.Fields(`-fprint -fprint0 -fls`) {
		findPrimaries[p] = findPrimary{args: 1, refuse: writes, instead: "use -print and read the output"}
	}
	findPrimaries["-fprintf"] = findPrimary{args: 2, refuse: writes, instead: "use -printf and read the output"}
	findPrimaries["-files0-from"] = findPrimary{args: 1, refuse: namesFromFile, instead: "name the starting points"}
	findPrimaries["-follow"] = findPrimary{refuse: "follows symbolic links, which may lead out of the sandbox", instead: "leave it out (find -H follows only the starting points)"}
}

var progFind = &Program{
	Family: "find", Names: []string{"find"}, Run: runFind,
	Summary: "Walks the starting points it is given (inside the sandbox; none means \".\"). The arguments of -name, -path, -regex " +
		"and their variants are patterns; -newer, -anewer, -cnewer and -samefile read the file they name; -newerXY reads its " +
		"reference file unless Y is t. -H, -P, -D and -O are accepted.",
	Refuses: []string{"-L and -follow (they follow symbolic links out of the sandbox)",
		"-exec, -execdir, -ok, -okdir (they run programs), -delete, -fprint, -fprint0, -fprintf, -fls (they write or delete)",
		"-files0-from (starting points the gate never sees)",
		"a primary it does not know, and a path after the expression has begun"},
}

func runFind(inv *invocation, args *argList) *violation {
	w := args.words()
	bad := func(why string) *violation { return refuse(evidence.ClassUnsafeOption, "find "+why) }
	i := 0
	// Leading options.
	for ; i < len(w); i++ {
		a := w[i]
		switch {
		case a == "-H" || a == "-P":
		case a == "-L":
			return bad("-L follows symbolic links, which may lead out of the sandbox; use -H, which follows only the starting points")
		case a == "-D":
			if i+1 >= len(w) {
				return bad("-D needs its debug options")
			}
			inv.addWord(args.at(i+1), roleText)
			i++
		case strings.HasPrefix(a, "-O") && len(a) > 2:
		default:
			goto roots
		}
	}
roots:
	for ; i < len(w) && !findExprWord(w[i]); i++ {
		inv.addWord(args.at(i), roleRead)
	}
	for ; i < len(w); i++ {
		a := w[i]
		p, ok := findPrimaries[a]
		if !ok && strings.HasPrefix(a, "-newer") && len(a) == 8 {
			// -newerXY: the reference is a date when Y is t, else a file.
			role := roleRead
			if a[7] == 't' {
				role = roleText
			}
			p, ok = findPrimary{args: 1, role: role}, strings.IndexByte("aBcmt", a[6]) >= 0 && strings.IndexByte("aBcmt", a[7]) >= 0
		}
		switch {
		case !ok && findExprWord(a):
			return bad("primary '" + shown(a) + "' is not in the gate's model of find (see docs/policy.md); leave it out")
		case !ok:
			return bad("path '" + shown(a) + "' comes after the expression began; put every starting point before the first test")
		case p.refuse != "":
			return bad(a + " " + p.refuse + "; " + p.instead)
		}
		if i+p.args >= len(w) {
			return bad(a + " needs an argument")
		}
		for k := 1; k <= p.args; k++ {
			inv.addWord(args.at(i+k), p.role)
		}
		i += p.args
	}
	return nil
}

// findExprWord reports a word that begins find's expression.
func findExprWord(a string) bool {
	return len(a) > 1 && a[0] == '-' || a == "(" || a == ")" || a == "!" || a == ","
}
