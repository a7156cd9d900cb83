package forget

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// CutListError is ReadOwners' error for a list whose last line has no end:
// a producer that stopped mid-line (a crash, a timeout, head -c) hands over
// part of an id, and "user-12" cut from "user-123" may be another owner.
type CutListError struct {
	// Line is the number of the last line; Text is what it holds.
	Line int
	Text string
}

func (e *CutListError) Error() string {
	return fmt.Sprintf("line %d (%q) has no line end: the list may be cut off", e.Line, e.Text)
}

// ReadOwners reads an owner list: one owner id a line, whole (commas and
// inner spaces are part of it; edge spaces and a CR are not), blank lines
// and lines starting with # skipped, a UTF-8 byte order mark before the
// first line ignored. Every line that holds anything, a comment too, must
// end with a line feed, the last one as well (*CutListError); trailing
// spaces without one are no line.
func ReadOwners(r io.Reader) ([]string, error) {
	var out []string
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		ended := strings.HasSuffix(line, "\n")
		id := strings.TrimSpace(line)
		if id != "" && !ended {
			return nil, &CutListError{Line: n, Text: id}
		}
		if id != "" && !strings.HasPrefix(id, "#") {
			out = append(out, id)
		}
		if err != nil { // io.EOF
			return out, nil
		}
	}
}
