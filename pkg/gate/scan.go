package gate

// The shared option scanner.
//
// Every modelled program declares its options as a table (an optSpec); this
// file reads an argument list against such a table the way the program's
// own parser would, so the gate knows which words are options, which are
// option values and which are operands. One scanner serves every syntax the
// catalogue meets:
//
//   - GNU getopt_long (grep, sed, coreutils, git's parse-options): short
//     options clustered ("-rn"), values glued ("-A3", "-fFILE") or in the
//     next word, "--long=value" and "--long value", "--" ends options, and
//     an unambiguous prefix of a long option IS that option ("--rege" is
//     "--regexp"). Options may follow operands (GNU permutes argv).
//   - Python argparse (pytest, mypy, unittest): the same, with prefixes
//     switched per program (pytest turns them off, mypy leaves them on) and
//     "-x=value" meaning the value "value".
//   - click and clap (black, ruff): the same without prefixes.
//   - Go's flag package (go): "-name" and "--name" alike, "-name=value" or
//     "-name value", no clusters, no prefixes.
//
// A reading the program itself would reject (an unknown option, a missing
// value, an ambiguous prefix) is reported as invalid rather than guessed.

import (
	"sort"
	"strings"

	"github.com/deponent-dev/deponent-action/pkg/evidence"
)

// argKind says whether an option takes a value.
type argKind uint8

const (
	noArg   argKind = iota // a flag
	reqArg                 // a value: glued ("-oFILE", "--out=FILE") or the next word
	optArg                 // an optional value: glued only ("-i.bak", "--in-place=.bak"); optNext in an argparse table
	optNext                // an optional value, glued or the next word when that does not start with '-' (argparse nargs='?')
)

// Role is what a word means to the program that receives it, and so how
// the gate checks it.
type Role uint8

const (
	roleNone    Role = iota // an option word itself: no value in it
	rolePattern             // a regular expression, glob or name a program only matches text or file names against: not a path, exempt from the denylist
	roleText                // text that is not a path (a number, code, a message, a format): the denylist still applies
	roleRead                // a path the program reads: must resolve inside the sandbox
	roleWrite               // a path the program writes or creates: inside the sandbox and not protected
	roleDelete              // a path the program removes: inside, not protected, never the sandbox root
	roleArg                 // an argument whose meaning the gate does not know (a script's argv): every reading checked as a path the program may write
	// roleWriteTree: where a copied or moved tree lands (cp -r, mv). As
	// roleWrite, and it must not hold a protected path either: the tree's
	// own entries are created below it, so `cp -r build/gh .github` would
	// create .github/workflows.
	roleWriteTree
	// roleWriteDest: the destination operand of cp -r or mv without -T. An
	// existing directory only receives the trees (each checked as
	// roleWriteTree under its own name); any other destination is where a
	// tree lands, checked as roleWriteTree.
	roleWriteDest
	// roleRewriteTree: a file or a directory a formatter or fixer rewrites
	// (black, ruff format, ruff check --fix). As roleWrite, and a directory
	// must not hold a protected directory with Python sources in it, which
	// the tool would rewrite as it walks (black . reformats
	// .github/actions/*/*.py).
	roleRewriteTree
	// roleRewriteGoTree: the same for gofmt's rewrite of .go files (go fmt).
	roleRewriteGoTree
)

func (r Role) String() string {
	switch r {
	case rolePattern:
		return "pattern"
	case roleText:
		return "text"
	case roleRead:
		return "read path"
	case roleWrite:
		return "write path"
	case roleDelete:
		return "removed path"
	case roleArg:
		return "argument"
	case roleWriteTree, roleWriteDest, roleRewriteTree, roleRewriteGoTree:
		return "tree write path"
	}
	return "option"
}

// isPath reports roles whose value is checked as a path.
func (r Role) isPath() bool { return r >= roleRead }

// Opt declares one option of a program.
type Opt struct {
	Short string   // short spellings, one letter each ("r" or "rR"); "" for none
	Long  []string // long spellings without the dashes ("regexp"); nil for none
	Arg   argKind  // whether it takes a value
	// AltArg is the value kind in the alternate reading (the BSD variant of
	// the program, see optSpec.Alt) when it differs from Arg; AltSet marks
	// it as given.
	AltArg argKind
	AltSet bool
	Role   Role   // what the value is
	Refuse string // non-empty: the option is refused, and this is why
	// Instead tells the agent what to do instead of a refused option.
	Instead string
	Class   evidence.Class // the refusal's class; ClassUnsafeOption when empty
	Key     string         // the name hooks ask for ("regexp"); the first long or short spelling when empty
	Doc     string         // a note for docs/policy.md on an allowed option, when its treatment is not obvious
}

func (o *Opt) key() string {
	switch {
	case o.Key != "":
		return o.Key
	case len(o.Long) > 0:
		return o.Long[0]
	}
	return o.Short[:1]
}

// spelling is the option's most readable name: "--regexp" or "-e".
func (o *Opt) spelling() string {
	if len(o.Long) > 0 {
		return "--" + o.Long[0]
	}
	return "-" + o.Short[:1]
}

// syntaxStyle is the family of option parsers a program uses.
type syntaxStyle uint8

const (
	styleGetopt   syntaxStyle = iota // GNU getopt_long (and parse-options, argparse, click, clap with the knobs below)
	styleGoFlag                      // Go's flag package
	styleArgparse                    // Python argparse: getopt_long plus "-x=value"
)

// optSpec is one option table: a program's, or a subcommand's.
type optSpec struct {
	Name    string      // "grep", "git log": used in reasons
	Style   syntaxStyle // the parser family
	Prefix  bool        // a unique prefix of a long option is that option
	Permute bool        // options may follow operands (GNU); otherwise the first operand ends the options
	// Alt asks for a second, alternate reading: how the program's BSD
	// variant (macOS runners) reads the same words — it stops at the first
	// operand (plain getopt) unless AltPermute, and options with AltSet
	// take AltArg. Each word is checked under every reading the real
	// program could apply.
	Alt        bool
	AltPermute bool // the BSD variant uses getopt_long, which permutes too
	// ArgFiles: the program reads arguments from "@file" words (argparse
	// fromfile_prefix_chars, argfile): those are refused, since the gate
	// would never see the options inside.
	ArgFiles bool
	// DigitOpts: "-5" style digit options (grep's context, head's count).
	DigitOpts bool
	// Negate: "--no-X" is the negation of a flag "--X", and "--X" of a flag
	// "--no-X" (git's parse-options, mypy's invertible flags).
	Negate bool
	Opts   []Opt

	short [128]*Opt
	long  []longName // sorted by name
}

type longName struct {
	name string
	opt  *Opt
}

// build indexes the table. It panics on a malformed table: the catalogue
// is code, and TestCatalogue builds every table.
func (s *optSpec) build() *optSpec {
	for i := range s.Opts {
		o := &s.Opts[i]
		if o.Short == "" && len(o.Long) == 0 {
			panic("gate: option without a spelling in " + s.Name)
		}
		for j := 0; j < len(o.Short); j++ {
			c := o.Short[j]
			if c >= 128 || s.short[c] != nil {
				panic("gate: duplicate short option -" + string(c) + " in " + s.Name)
			}
			s.short[c] = o
		}
		for _, l := range o.Long {
			s.long = append(s.long, longName{l, o})
		}
		if o.Refuse != "" && o.Class == "" {
			o.Class = evidence.ClassUnsafeOption
		}
	}
	sort.Slice(s.long, func(i, j int) bool { return s.long[i].name < s.long[j].name })
	for i := 1; i < len(s.long); i++ {
		if s.long[i].name == s.long[i-1].name {
			panic("gate: duplicate long option --" + s.long[i].name + " in " + s.Name)
		}
	}
	if s.DigitOpts {
		for c := '0'; c <= '9'; c++ {
			if s.short[c] == nil {
				s.short[c] = &digitOpt
			}
		}
	}
	return s
}

var digitOpt = Opt{Short: "0", Key: "NUM"}

// lookupLong finds a long option by exact name or, when the spec allows
// it, by unambiguous prefix. Several matches that are the same option
// (aliases such as --color/--colour) are one match, as in getopt_long.
func (s *optSpec) lookupLong(name string) (o *Opt, full string, ambiguous []string) {
	return s.lookup(name, s.Negate)
}

func (s *optSpec) lookup(name string, negate bool) (o *Opt, full string, ambiguous []string) {
	i := sort.Search(len(s.long), func(i int) bool { return s.long[i].name >= name })
	if i < len(s.long) && s.long[i].name == name {
		return s.long[i].opt, name, nil
	}
	if !s.Prefix || name == "" {
		if !negate {
			return nil, "", nil
		}
		return s.negated(name)
	}
	for j := i; j < len(s.long) && strings.HasPrefix(s.long[j].name, name); j++ {
		if o == nil {
			o, full = s.long[j].opt, s.long[j].name
			continue
		}
		if s.long[j].opt != o {
			if ambiguous == nil {
				ambiguous = []string{full}
			}
			ambiguous = append(ambiguous, s.long[j].name)
		}
	}
	if ambiguous != nil {
		return nil, "", ambiguous
	}
	if o == nil && negate {
		return s.negated(name)
	}
	return o, full, nil
}

// negated looks name up as the negation of a flag.
func (s *optSpec) negated(name string) (*Opt, string, []string) {
	var base string
	if b, ok := strings.CutPrefix(name, "no-"); ok {
		base = b
	} else {
		base = "no-" + name
	}
	o, full, amb := s.lookup(base, false)
	if amb != nil || o == nil || o.Arg != noArg {
		return nil, "", amb
	}
	if strings.HasPrefix(full, "no-") {
		return o, full[3:], nil
	}
	return o, "no-" + full, nil
}

// seenOpt is one option occurrence in a scan.
type seenOpt struct {
	opt  *Opt
	word int    // index of the word holding the option
	name string // how it was written, resolved: "--regexp" for "--rege", "-e"
	val  int    // index of the word holding the value, -1 when none
	off  int    // offset of the value inside that word
}

// value returns the option's value as the program receives it.
func (o *seenOpt) value(words []string) (string, bool) {
	if o.val < 0 {
		return "", false
	}
	return words[o.val][o.off:], true
}

// scanResult is one reading of an argument list.
type scanResult struct {
	specName string // the table's name: "ruff format"
	opts     []seenOpt
	operands []int // indices of operand words, in order
	dashdash int   // index of the "--" that ended the options, -1 when none
	// invalid is set when the program would refuse this argument list
	// (unknown option, missing value, ambiguous prefix); nothing else in
	// the result is then meaningful.
	invalid string
	// ambiguous is set with invalid for an ambiguous prefix.
	ambiguous []string
	// unknown is set with invalid for an option the table does not have.
	unknown string
}

func (r *scanResult) has(key string) bool {
	for i := range r.opts {
		if r.opts[i].opt.key() == key {
			return true
		}
	}
	return false
}

func (r *scanResult) get(key string) *seenOpt {
	for i := range r.opts {
		if r.opts[i].opt.key() == key {
			return &r.opts[i]
		}
	}
	return nil
}

// Caps that keep one reading linear and small: longer clusters and more
// options are refused (no real command line needs them).
const (
	maxCluster     = 64   // letters in one short-option cluster
	maxOptsPerScan = 1024 // option occurrences in one reading
)

// shortNames spells each ASCII short option once, so a scan allocates no
// strings for them.
var shortNames = func() (t [128]string) {
	for c := range t {
		t[c] = "-" + string(rune(c))
	}
	return t
}()

// scanArgs reads words against spec. alt selects the alternate (BSD)
// reading. Operands and option values are reported by index; the words
// themselves are not copied.
func scanArgs(spec *optSpec, words []string, alt bool) scanResult {
	res := scanResult{specName: spec.Name, dashdash: -1}
	permute := spec.Permute && (!alt || spec.AltPermute)
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			res.dashdash = i
			for j := i + 1; j < len(words); j++ {
				res.operands = append(res.operands, j)
			}
			return res
		}
		if len(w) < 2 || w[0] != '-' {
			res.operands = append(res.operands, i)
			if !permute {
				for j := i + 1; j < len(words); j++ {
					res.operands = append(res.operands, j)
				}
				return res
			}
			continue
		}
		if len(res.opts) >= maxOptsPerScan {
			res.invalid = "more than 1024 options"
			return res
		}
		if spec.Style == styleGoFlag || strings.HasPrefix(w, "--") {
			next, ok := scanLong(spec, words, i, alt, &res)
			if !ok {
				return res
			}
			i = next
			continue
		}
		next, ok := scanShort(spec, words, i, alt, &res)
		if !ok {
			return res
		}
		i = next
	}
	return res
}

// kindIn is how the program's parser takes the option's value. argparse
// has no glued-only optional value: an option with nargs='?' takes the
// next word too when that does not look like an option (pytest --debug
// FILE), so optArg reads as optNext in an argparse table, whatever the
// table says.
func kindIn(spec *optSpec, o *Opt, alt bool) argKind {
	k := o.Arg
	if alt && o.AltSet {
		k = o.AltArg
	}
	if k == optArg && spec.Style == styleArgparse {
		k = optNext
	}
	return k
}

// scanLong reads "--name", "--name=value" (and, for Go flags, the same
// with one dash). It returns the index of the last word it consumed.
func scanLong(spec *optSpec, words []string, i int, alt bool, res *scanResult) (int, bool) {
	w := words[i]
	body := strings.TrimPrefix(w, "-")
	if spec.Style == styleGoFlag {
		body = strings.TrimPrefix(body, "-")
	} else {
		body = body[1:]
	}
	name, _, hasEq := strings.Cut(body, "=")
	o, full, amb := spec.lookupLong(name)
	dashes := "--"
	if spec.Style == styleGoFlag {
		dashes = "-"
	}
	switch {
	case amb != nil:
		res.invalid = "'" + dashes + name + "' is an ambiguous abbreviation (it could be " + joinDashed(dashes, amb) + ")"
		res.ambiguous = amb
		return i, false
	case o == nil:
		res.invalid = "unknown option '" + dashes + name + "'"
		res.unknown = dashes + name
		return i, false
	}
	seen := seenOpt{opt: o, word: i, name: dashes + full, val: -1}
	kind := kindIn(spec, o, alt)
	switch {
	case hasEq && kind == noArg && spec.Style != styleGoFlag:
		res.invalid = "option '" + dashes + full + "' takes no value"
		return i, false
	case hasEq:
		seen.val, seen.off = i, len(w)-len(body)+len(name)+1
	case kind == reqArg:
		if i+1 >= len(words) {
			res.invalid = "option '" + dashes + full + "' needs a value"
			return i, false
		}
		i++
		seen.val, seen.off = i, 0
	case kind == optNext && i+1 < len(words) && !looksLikeOption(words[i+1]):
		i++
		seen.val, seen.off = i, 0
	}
	res.opts = append(res.opts, seen)
	return i, true
}

// looksLikeOption: argparse does not take such a word as an optional value.
func looksLikeOption(w string) bool { return len(w) > 1 && w[0] == '-' }

// scanShort reads a cluster of short options: "-rn", "-A3", "-e PATTERN".
func scanShort(spec *optSpec, words []string, i int, alt bool, res *scanResult) (int, bool) {
	w := words[i]
	for j := 1; j < len(w); j++ {
		c := w[j]
		if j > maxCluster {
			res.invalid = "an option cluster of more than 64 letters"
			return i, false
		}
		var o *Opt
		if c < 128 {
			o = spec.short[c]
		}
		if o == nil {
			if c >= 128 {
				res.invalid = "unknown option in '" + shown(w) + "'"
				res.unknown = w
				return i, false
			}
			res.invalid = "unknown option '" + shortNames[c] + "'"
			res.unknown = shortNames[c]
			return i, false
		}
		seen := seenOpt{opt: o, word: i, name: shortNames[c], val: -1}
		switch kindIn(spec, o, alt) {
		case reqArg:
			if j+1 < len(w) {
				seen.val, seen.off = i, j+1
				if spec.Style == styleArgparse && w[j+1] == '=' {
					seen.off++
				}
			} else {
				if i+1 >= len(words) {
					res.invalid = "option '-" + string(rune(c)) + "' needs a value"
					return i, false
				}
				i++
				seen.val, seen.off = i, 0
			}
			res.opts = append(res.opts, seen)
			return i, true
		case optArg, optNext:
			if j+1 < len(w) {
				seen.val, seen.off = i, j+1
			} else if kindIn(spec, o, alt) == optNext && i+1 < len(words) && !looksLikeOption(words[i+1]) {
				i++
				seen.val, seen.off = i, 0
			}
			res.opts = append(res.opts, seen)
			return i, true
		}
		res.opts = append(res.opts, seen)
	}
	return i, true
}

func joinDashed(dashes string, names []string) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(dashes)
		b.WriteString(n)
	}
	return b.String()
}
