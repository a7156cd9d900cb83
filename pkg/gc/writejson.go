package gc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes doc, a document that holds plans, as encoding/json
// would (indented by two spaces, or on one line), but
// renders the candidates of its plans one at a time: a plan of a million
// candidates would otherwise be held whole in memory, several times over,
// by the encoder. It encodes doc with the plans' candidates left empty, then
// writes each plan's list where its empty one stands. plans are the plans in
// doc, in the order doc holds them. "candidates" is a key of plans only, and
// no JSON string can hold `"candidates":` (an inner quote is escaped), so the
// k-th such key is the k-th plan's.
func WriteJSON(w io.Writer, doc any, indent bool, plans []*Plan) error {
	encode := func(w io.Writer, v any) error { return json.NewEncoder(w).Encode(v) }
	stub := []byte(`"candidates":[]`)
	if indent {
		encode = func(w io.Writer, v any) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		}
		stub = []byte(`"candidates": []`)
	}
	saved := make([]Candidates, len(plans))
	for i, p := range plans {
		saved[i], p.Candidates = p.Candidates, Candidates{}
	}
	var buf bytes.Buffer
	err := encode(&buf, doc)
	for i, p := range plans {
		p.Candidates = saved[i]
	}
	if err != nil {
		return err
	}
	b := buf.Bytes()
	if bytes.Count(b, stub) != len(plans) {
		return encode(w, doc) // not as expected: encode it whole
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, p := range plans {
		k := bytes.Index(b, stub)        // the key
		end := k + len(stub) - len("[]") // where the list goes
		bw.Write(b[:end])
		prefix, in := "", ""
		if indent { // the key's indentation
			prefix, in = string(b[bytes.LastIndexByte(b[:k], '\n')+1:k]), "  "
		}
		if err := p.Candidates.WriteJSON(bw, prefix, in); err != nil {
			return err
		}
		b = b[end+len("[]"):]
	}
	bw.Write(b)
	return bw.Flush()
}
