package analysis

import (
	"strings"
	"testing"
)

// FuzzParseGrouping: any text gives a valid grouping or an error, never a
// panic, and a valid grouping assigns every name it lists.
func FuzzParseGrouping(f *testing.F) {
	f.Add("point, part 1: point-query, hot-points\nwrites: update-*\n")
	f.Add(`{"name":"x","groups":[{"name":"a","steps":["[a-"]}]}`)
	f.Add("# only a comment\n")
	f.Add("a: [\n")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParseGrouping(strings.NewReader(text))
		if err != nil {
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("parsed grouping does not validate: %v", err)
		}
		for _, d := range g.Groups {
			for _, s := range d.Steps {
				if _, ok := g.GroupOf(s); !ok && !strings.ContainsAny(s, `*?[\`) {
					t.Fatalf("step %q of group %q is in no group", s, d.Name)
				}
			}
		}
	})
}
