package retain_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mediactl/mediactl/pkg/ref"
	"github.com/mediactl/mediactl/pkg/retain"
)

// TestTheSpecTable runs the table of docs/retention.md: each example, given
// as a database column value is (its raw text, and the strings of the JSON
// it holds), keeps its blob or not as the row says. The page and the rule
// cannot drift apart.
func TestTheSpecTable(t *testing.T) {
	page, err := os.ReadFile("../../docs/retention.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(page), "<!-- spec-table -->")
	table, _, ok2 := strings.Cut(table, "<!-- end spec-table -->")
	if !ok || !ok2 {
		t.Fatal("docs/retention.md: no spec-table markers")
	}
	rows := 0
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
		cells := splitRow(line)
		if len(cells) != 4 {
			t.Fatalf("row %q: %d cells, want 4", line, len(cells))
		}
		form, example, blob, want := cells[0], code(t, cells[1]), code(t, cells[2]), cells[3] == "yes"
		x := retain.NewIndex()
		id := x.Add("store/" + blob)
		ex := &ref.Extractor{Found: func(ref.Reference, ref.Place) {}, Text: x.Mark}
		ex.Value([]byte(example), ref.Place{})
		if got := x.Referenced(id); got != want {
			t.Errorf("%s: %s keeps %q: %v, the page says %v", form, example, blob, got, want)
		}
		rows++
	}
	if rows < 20 {
		t.Fatalf("only %d rows", rows)
	}
}

// splitRow splits a Markdown table row at the pipes outside code spans.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	inCode, start := false, 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '`':
			inCode = !inCode
		case '|':
			if !inCode {
				cells = append(cells, strings.TrimSpace(line[start:i]))
				start = i + 1
			}
		}
	}
	return append(cells, strings.TrimSpace(line[start:]))
}

// code is the text of a cell that is one code span.
func code(t *testing.T, cell string) string {
	t.Helper()
	if len(cell) < 2 || cell[0] != '`' || cell[len(cell)-1] != '`' {
		t.Fatalf("cell %q is not one code span", cell)
	}
	return cell[1 : len(cell)-1]
}
