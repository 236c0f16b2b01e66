package gate

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// docs/policy.md lists every modelled program and what it refuses, between
// two markers; this test renders that section from the catalogue and fails
// when the document differs (go test -run TestPolicyDocCatalogue -update
// rewrites it).

const (
	docPath        = "../../docs/policy.md"
	docBeginMarker = "<!-- catalogue:begin (generated from pkg/gate's catalogue by TestPolicyDocCatalogue -update) -->"
	docEndMarker   = "<!-- catalogue:end -->"
)

func renderCatalogueDoc() string {
	progs := append([]*Program(nil), catalogue...)
	sort.Slice(progs, func(i, j int) bool { return progs[i].Family < progs[j].Family })
	def := map[string]bool{}
	for _, h := range defaultAllowHeads {
		def[h] = true
	}
	defMod := map[string]bool{}
	for _, m := range defaultPythonModules {
		defMod[m] = true
	}
	var b strings.Builder
	b.WriteString("\n")
	for _, p := range progs {
		b.WriteString("### " + p.Family + "\n\n")
		var names []string
		for _, n := range p.Names {
			s := "`" + n + "`"
			if def[n] {
				s += " (default)"
			}
			names = append(names, s)
		}
		for _, m := range p.Modules {
			s := "`python -m " + m + "`"
			if defMod[m] {
				s += " (default)"
			}
			names = append(names, s)
		}
		if p.NameMatch != nil {
			names = append(names, "versioned names such as `python3.12`")
		}
		b.WriteString("Runs as: " + strings.Join(names, ", ") + ".\n\n")
		b.WriteString(p.Summary + "\n\n")
		var refusals []string
		specs := append([]*optSpec{}, p.SubSpecs...)
		if p.Spec != nil {
			specs = append([]*optSpec{p.Spec}, specs...)
		}
		for _, s := range specs {
			for i := range s.Opts {
				o := &s.Opts[i]
				if o.Refuse == "" {
					continue
				}
				var sp []string
				for j := 0; j < len(o.Short); j++ {
					sp = append(sp, "`-"+o.Short[j:j+1]+"`")
				}
				for _, l := range o.Long {
					sp = append(sp, "`--"+l+"`")
				}
				refusals = append(refusals, s.Name+" "+strings.Join(sp, ", ")+": "+o.Refuse+" ("+o.Instead+")")
			}
		}
		refusals = append(refusals, p.Refuses...)
		if p.Spec != nil || len(p.SubSpecs) > 0 {
			refusals = append(refusals, "any option not in its model (`"+modelName(p)+"`: unknown options are refused, and "+abbrevNote(p)+")")
		}
		if len(refusals) > 0 {
			b.WriteString("Refuses:\n\n")
			for _, r := range refusals {
				b.WriteString("- " + r + "\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func modelName(p *Program) string {
	if p.Spec != nil {
		return p.Spec.Name
	}
	return p.Family
}

func abbrevNote(p *Program) string {
	s := p.Spec
	if s == nil && len(p.SubSpecs) > 0 {
		s = p.SubSpecs[len(p.SubSpecs)-1]
	}
	switch {
	case s == nil:
		return "its syntax is read by its own hook"
	case s.Style == styleGoFlag:
		return "Go flags take no abbreviations"
	case s.Prefix:
		return "an unambiguous prefix of a long option is that option"
	}
	return "long options must be spelled in full, as the program requires"
}

func TestPolicyDocCatalogue(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, docBeginMarker)
	j := strings.Index(doc, docEndMarker)
	if i < 0 || j < i {
		t.Fatalf("%s: the catalogue markers are missing", docPath)
	}
	want := renderCatalogueDoc()
	got := doc[i+len(docBeginMarker) : j]
	if got == want {
		return
	}
	if *updateGolden {
		if err := os.WriteFile(docPath, []byte(doc[:i+len(docBeginMarker)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the modelled programs section is out of step with the catalogue; run go test ./pkg/gate -run TestPolicyDocCatalogue -update", docPath)
}

// The document names every program the default policy allows, the caps a
// command is held to, and the variables a command may set.
func TestPolicyDocMentions(t *testing.T) {
	data, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, v := range AssignableVariables() {
		if !strings.Contains(doc, "`"+v+"`") {
			t.Errorf("docs/policy.md does not list the assignable variable %s", v)
		}
	}
	for _, s := range []string{"64 KiB", "256 commands", "8192 words", "4096 quotes", "`2>&1`", "`cd SUBDIR"} {
		if !strings.Contains(doc, s) {
			t.Errorf("docs/policy.md does not mention %q", s)
		}
	}
}
