package canon

// Objects of any size are written with their members sorted by key in
// code-point order, whichever path writes them: the encoder (Canonical,
// AppendCanonicalWithout) and the transcoder (Transcoder.Object), at the
// top level and nested. Both sort small objects one way and objects of more
// than 32 members another; these tests hold every size to a reference form
// computed here, independently: keys compared as sequences of code points
// (as the reference's sort_keys does), members written as `"k": "v"`
// joined by ", ".

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyKeys returns n distinct keys that no sort gets right by accident:
// shared 8-byte prefixes (the transcoder's fast comparison), prefixes of
// each other, non-ASCII in and beyond the BMP, the empty key, and digits
// that sort differently as numbers and as text.
func manyKeys(n int, rng *rand.Rand) []string {
	alphabet := []string{"a", "b", "z", "A", "Z", "0", "9", "_", "-", " ", "é", "ÿ", "Ā", "中", "\uffee", "😀", "𝄞"}
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if !seen[k] && len(keys) < n {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	add("")
	add("prefix__")
	add("prefix__a")
	add("prefix__😀")
	add("prefix__中")
	add("10")
	add("9")
	for len(keys) < n {
		var b strings.Builder
		if rng.IntN(3) == 0 {
			b.WriteString("prefix__") // same first 8 bytes
		}
		for range 1 + rng.IntN(4) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		add(b.String())
	}
	return keys
}

// codePointLess compares as the reference does: code point by code point.
func codePointLess(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if ra[i] != rb[i] {
			if ra[i] < rb[i] {
				return -1
			}
			return 1
		}
	}
	return len(ra) - len(rb)
}

// referenceObject is the canonical text of a flat object of string values,
// written without this package. Keys and values hold nothing that needs an
// escape.
func referenceObject(keys []string, val func(string) string) string {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, codePointLess)
	parts := make([]string, len(sorted))
	for i, k := range sorted {
		parts[i] = `"` + k + `": ` + val(k)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// shuffledJSON is the same object as JSON text with members in the given
// order and irregular whitespace.
func shuffledJSON(keys []string, val func(string) string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = `"` + k + `" :` + val(k)
	}
	return "{ " + strings.Join(parts, " ,\n") + " }"
}

func TestObjectsOfAnySizeSortByCodePoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 32))
	for _, n := range []int{2, 31, 32, 33, 34, 64, 257} {
		t.Run(fmt.Sprintf("%d keys", n), func(t *testing.T) {
			keys := manyKeys(n, rng)
			require.Len(t, keys, n)
			rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			require.False(t, slices.IsSortedFunc(keys, codePointLess), "the input must start out of order")
			str := func(k string) string { return `"v` + k + `"` }
			want := referenceObject(keys, str)

			// The encoder, from a Value built in the shuffled order.
			ms := make([]Member, len(keys))
			for i, k := range keys {
				ms[i] = M(k, Str("v"+k))
			}
			v := Obj(ms...)
			assert.Equal(t, want, string(Canonical(v)), "Canonical")
			assert.Equal(t, want, string(AppendCanonicalWithout(nil, v.With("omitted", Int(1)), "omitted")), "AppendCanonicalWithout")

			// Parsed from text, then encoded.
			src := shuffledJSON(keys, str)
			p, err := Parse([]byte(src), Limits{})
			require.NoError(t, err)
			assert.Equal(t, want, string(Canonical(p)), "Parse then Canonical")

			// The transcoder, at the top level (twice: the second call
			// reuses the first one's key-order template) and nested.
			tr := NewTranscoder(Limits{}, nil, nil)
			for range 2 {
				got, err := tr.Object([]byte(src))
				require.NoError(t, err)
				assert.Equal(t, want, string(got), "Transcoder.Object")
			}
			nested := `{"z": ` + src + `, "a": [` + src + `]}`
			got, err := tr.Object([]byte(nested))
			require.NoError(t, err)
			assert.Equal(t, `{"a": [`+want+`], "z": `+want+`}`, string(got), "Transcoder.Object, nested")
			pn, err := Parse([]byte(nested), Limits{})
			require.NoError(t, err)
			assert.Equal(t, string(got), string(Canonical(pn)), "Canonical, nested")

			// Values that are objects of many keys themselves.
			obj := func(k string) string { return referenceObject(keys, str) }
			want2 := referenceObject(keys[:min(n, 40)], obj)
			src2 := shuffledJSON(keys[:min(n, 40)], func(k string) string { return shuffledJSON(keys, str) })
			got, err = tr.Object([]byte(src2))
			require.NoError(t, err)
			assert.Equal(t, want2, string(got), "Transcoder.Object, objects of objects")
			p2, err := Parse([]byte(src2), Limits{})
			require.NoError(t, err)
			assert.Equal(t, want2, string(Canonical(p2)), "Canonical, objects of objects")
		})
	}
}

// TestManyKeysDuplicateRefused: past 32 members the duplicate check still
// sees a repeated key, wherever it sits.
func TestManyKeysDuplicateRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := manyKeys(100, rng)
	for _, at := range []int{0, 50, 99} {
		dup := append(slices.Clone(keys), keys[at])
		rng.Shuffle(len(dup), func(i, j int) { dup[i], dup[j] = dup[j], dup[i] })
		src := shuffledJSON(dup, func(k string) string { return `"x"` })
		_, err := NewTranscoder(Limits{}, nil, nil).Object([]byte(src))
		assert.ErrorContains(t, err, "duplicate key", "transcoder, key %q", keys[at])
		_, err = Parse([]byte(src), Limits{})
		assert.ErrorContains(t, err, "duplicate key", "parser, key %q", keys[at])
	}
}
