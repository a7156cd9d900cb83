// Package jsonwalk reads a stream of JSON values in one pass and hands every
// string value to a handler, with enough context (member name, JSON pointer, byte
// offset) to say exactly where it was.
//
// It exists because session files are large and untrusted: decoding them into
// map[string]any costs allocations per value and a recursion per nesting level.
// The walker instead keeps an explicit stack (deeply nested input cannot blow the
// goroutine stack; depth is capped), reads through a fixed-size buffer that only
// grows to hold one oversized string (memory stays bounded on a 200 MB file), and
// finds string ends with bytes.IndexByte, so most bytes are only looked at by
// vectorised code.
//
// The input may hold several top-level values one after another (JSON Lines,
// NDJSON, concatenated JSON). Input that ends inside a value is reported as a
// *SyntaxError with the offset where it stopped.
package jsonwalk

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Handler receives what the walker finds. In every callback, Walker.Pointer and
// Walker.Key describe the value the callback is about.
type Handler interface {
	// Begin is called when an object ('{') or array ('[') opens.
	Begin(w *Walker, kind byte) error
	// End is called when an object ('}') or array (']') closes; kind is '{' or '['.
	End(w *Walker, kind byte) error
	// String is called for every string value (not for member names). s is the
	// decoded string and is only valid until String returns.
	String(w *Walker, s []byte, offset int64) error
}

// NameHandler is an optional extension of Handler. A handler that implements
// it is also told every member name and every number, in document order. The
// retention rule needs them: a file name can be a member name
// ({"attachments": {"ab….png": {…}}}) and a number can name a file
// ({"media_id": 1234567890} and 1234567890.jpg). Handlers that only look at
// string values do not implement it and pay nothing.
type NameHandler interface {
	// Name is called for every member name, decoded; name is only valid
	// until Name returns. Walker.Depth is the depth of the object that holds
	// the member; Key and Pointer still describe its previous member.
	Name(w *Walker, name []byte) error
	// Number is called for every number with its text as written, valid
	// until Number returns; Key and Pointer describe it as for String.
	Number(w *Walker, num []byte) error
}

// SyntaxError is malformed or truncated input.
type SyntaxError struct {
	Offset int64  // byte offset in the input where reading stopped
	Msg    string // what was wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// Limits bound the resources one walk may use.
type Limits struct {
	MaxDepth int // nesting levels; 0 means DefaultMaxDepth
	MaxToken int // bytes in one string, number or literal; 0 means DefaultMaxToken
}

const (
	DefaultMaxDepth = 10000
	DefaultMaxToken = 64 << 20
	readSize        = 256 << 10
)

type frame struct {
	kind  byte // '{' or '['
	index int  // array: index of the current element
	key   []byte
}

const (
	stValue        = iota // a value is expected (top level, after ':' or ',' in an array)
	stValueOrClose        // right after '['
	stKeyOrClose          // right after '{'
	stKey                 // after ',' in an object
	stColon               // after a member name
	stCommaOrClose        // after a value inside a container
)

// Walker walks one input. Use New or NewBytes, then Run once.
type Walker struct {
	r       io.Reader
	h       Handler
	nh      NameHandler // h, when it implements NameHandler
	lim     Limits
	buf     []byte
	pos     int   // next unread byte in buf
	end     int   // end of valid data in buf
	base    int64 // input offset of buf[0]
	eof     bool
	readErr error
	stack   []frame
	state   int
	record  int
	values  int // top-level values completed
	scratch []byte
}

// New returns a walker that reads r.
func New(r io.Reader, h Handler, lim Limits) *Walker {
	w := &Walker{r: r, h: h, lim: lim.withDefaults()}
	w.nh, _ = h.(NameHandler)
	w.buf = bufPool.Get().(*[readSize]byte)[:]
	return w
}

// NewBytes returns a walker over b, which it does not copy or modify.
func NewBytes(b []byte, h Handler, lim Limits) *Walker {
	w := &Walker{h: h, lim: lim.withDefaults(), buf: b, end: len(b), eof: true}
	w.nh, _ = h.(NameHandler)
	return w
}

// ResetBytes makes a walker made by NewBytes walk b from its start, with the
// same handler and limits, keeping the memory its stack and scratch space grew
// to: for a caller that walks many small values one after another.
func (w *Walker) ResetBytes(b []byte) {
	*w = Walker{h: w.h, nh: w.nh, lim: w.lim, buf: b, end: len(b), eof: true, stack: w.stack[:0], scratch: w.scratch[:0]}
}

func (l Limits) withDefaults() Limits {
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxToken <= 0 {
		l.MaxToken = DefaultMaxToken
	}
	return l
}

// bufPool recycles read buffers: a scan walks thousands of documents, and a
// fresh 256 KiB buffer for each is garbage the collector must chase.
var bufPool = sync.Pool{New: func() any { return new([readSize]byte) }}

// release gives the read buffer back, unless it grew for an oversized token.
func (w *Walker) release() {
	if len(w.buf) == readSize {
		bufPool.Put((*[readSize]byte)(w.buf))
	}
	w.buf = nil
}

// Depth is the number of open containers.
func (w *Walker) Depth() int { return len(w.stack) }

// Record is the index of the current top-level value (the line of a JSON Lines file
// when each line holds one value).
func (w *Walker) Record() int { return w.record }

// Values is the number of complete top-level values read so far.
func (w *Walker) Values() int { return w.values }

// Key is the member name under which the current value sits, or nil when it is an
// array element or a top-level value. It is only valid during the callback.
func (w *Walker) Key() []byte {
	if len(w.stack) == 0 {
		return nil
	}
	f := &w.stack[len(w.stack)-1]
	if f.kind != '{' {
		return nil
	}
	return f.key
}

// InObject reports whether the current value is a member of an object.
func (w *Walker) InObject() bool { return len(w.stack) > 0 && w.stack[len(w.stack)-1].kind == '{' }

// Pointer renders the RFC 6901 JSON pointer of the current value within its
// top-level value ("" for the top-level value itself).
func (w *Walker) Pointer() string { return pointer(w.stack) }

func pointer(stack []frame) string {
	var b strings.Builder
	for i := range stack {
		f := &stack[i]
		b.WriteByte('/')
		if f.kind == '[' {
			b.WriteString(strconv.Itoa(f.index))
			continue
		}
		if bytes.IndexByte(f.key, '~') < 0 && bytes.IndexByte(f.key, '/') < 0 {
			b.Write(f.key)
			continue
		}
		for _, c := range f.key {
			switch c {
			case '~':
				b.WriteString("~0")
			case '/':
				b.WriteString("~1")
			default:
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

// Run reads the whole input. It returns a *SyntaxError for malformed input, the
// reader's error for an I/O failure, or the first error a handler returned.
func (w *Walker) Run() error {
	if w.r != nil {
		defer w.release()
	}
	if err := w.skipBOM(); err != nil {
		return err
	}
	for {
		if w.pos >= w.end {
			more, err := w.fill()
			if err != nil {
				return err
			}
			if !more {
				return w.atEOF()
			}
		}
		c := w.buf[w.pos]
		if isSpace[c] {
			w.pos = skipSpace(w.buf[:w.end], w.pos+1)
			continue
		}
		if err := w.step(c); err != nil {
			return err
		}
	}
}

// isSpace is JSON's white space.
var isSpace = [256]bool{' ': true, '\n': true, '\r': true, '\t': true}

// spaces8 is eight spaces read as one little-endian word.
const spaces8 = 0x2020202020202020

// skipSpace returns the index of the first byte at or after i in b that is
// not white space (len(b) if none). Indentation is read eight bytes at a
// time, the spaces at the start of each word counted at once: a
// pretty-printed session is a third white space.
func skipSpace(b []byte, i int) int {
	for i+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[i:]) ^ spaces8
		if x == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(x) / 8 // the spaces before the first other byte
		if !isSpace[b[i]] {
			return i
		}
		i++
	}
	for i < len(b) && isSpace[b[i]] {
		i++
	}
	return i
}

func (w *Walker) step(c byte) error {
	switch w.state {
	case stValue, stValueOrClose:
		switch c {
		case '"':
			s, off, err := w.readString()
			if err != nil {
				return err
			}
			if err := w.h.String(w, s, off); err != nil {
				return err
			}
			w.afterValue()
			return nil
		case '{', '[':
			if len(w.stack) >= w.lim.MaxDepth {
				return w.syntax(w.pos, fmt.Sprintf("nesting deeper than %d levels", w.lim.MaxDepth))
			}
			if err := w.h.Begin(w, c); err != nil {
				return err
			}
			w.pos++
			w.push(c)
			return nil
		case ']':
			if w.state == stValueOrClose {
				return w.close(c)
			}
			return w.syntax(w.pos, "unexpected ']' where a value belongs")
		}
		return w.scalar()
	case stKeyOrClose, stKey:
		switch c {
		case '"':
			s, _, err := w.readString()
			if err != nil {
				return err
			}
			if w.nh != nil {
				if err := w.nh.Name(w, s); err != nil {
					return err
				}
			}
			f := &w.stack[len(w.stack)-1]
			f.key = append(f.key[:0], s...)
			w.state = stColon
			return nil
		case '}':
			if w.state == stKeyOrClose {
				return w.close(c)
			}
		}
		return w.syntax(w.pos, fmt.Sprintf("expected a member name, found %q", c))
	case stColon:
		if c != ':' {
			return w.syntax(w.pos, fmt.Sprintf("expected ':' after member name, found %q", c))
		}
		w.pos++
		w.state = stValue
		return nil
	default: // stCommaOrClose
		f := &w.stack[len(w.stack)-1]
		switch c {
		case ',':
			w.pos++
			if f.kind == '{' {
				w.state = stKey
			} else {
				f.index++
				w.state = stValue
			}
			return nil
		case '}', ']':
			return w.close(c)
		}
		return w.syntax(w.pos, fmt.Sprintf("expected ',' or end of %s, found %q", kindName(f.kind), c))
	}
}

func kindName(k byte) string {
	if k == '{' {
		return "object"
	}
	return "array"
}

func (w *Walker) push(kind byte) {
	if len(w.stack) < cap(w.stack) {
		w.stack = w.stack[:len(w.stack)+1]
		f := &w.stack[len(w.stack)-1]
		f.kind, f.index, f.key = kind, 0, f.key[:0]
	} else {
		w.stack = append(w.stack, frame{kind: kind})
	}
	if kind == '{' {
		w.state = stKeyOrClose
	} else {
		w.state = stValueOrClose
	}
}

func (w *Walker) close(c byte) error {
	open := byte('{')
	if c == ']' {
		open = '['
	}
	top := w.stack[len(w.stack)-1].kind
	if top != open {
		return w.syntax(w.pos, fmt.Sprintf("%q closes an %s", c, kindName(top)))
	}
	w.pos++
	w.stack = w.stack[:len(w.stack)-1]
	if err := w.h.End(w, open); err != nil {
		return err
	}
	w.afterValue()
	return nil
}

func (w *Walker) afterValue() {
	if len(w.stack) > 0 {
		w.state = stCommaOrClose
		return
	}
	w.state = stValue
	w.values++
	w.record++
}

func (w *Walker) atEOF() error {
	if len(w.stack) == 0 && w.state == stValue {
		return nil
	}
	// Name the container that was left open, not the element that never came.
	where := pointer(w.stack[:len(w.stack)-1])
	if where == "" {
		where = "/"
	}
	return w.syntax(w.end, fmt.Sprintf("unexpected end of input inside %s at %s (truncated file?)", kindName(w.stack[len(w.stack)-1].kind), where))
}

func (w *Walker) syntax(pos int, msg string) error {
	return &SyntaxError{Offset: w.base + int64(pos), Msg: msg}
}

// fill makes more input available after w.end, keeping buf[w.pos:] (the token in
// progress). It reports whether any byte was added.
func (w *Walker) fill() (bool, error) {
	if w.eof {
		return false, w.readErr
	}
	if w.pos > 0 {
		n := copy(w.buf, w.buf[w.pos:w.end])
		w.base += int64(w.pos)
		w.end = n
		w.pos = 0
	}
	if w.end == len(w.buf) {
		if len(w.buf) >= w.lim.MaxToken {
			return false, w.syntax(w.pos, fmt.Sprintf("a single value is longer than %d bytes", w.lim.MaxToken))
		}
		nb := make([]byte, min(2*len(w.buf), w.lim.MaxToken))
		copy(nb, w.buf[:w.end])
		w.buf = nb
	}
	for {
		n, err := w.r.Read(w.buf[w.end:])
		w.end += n
		if err != nil {
			w.eof = true
			if err != io.EOF {
				w.readErr = fmt.Errorf("read at offset %d: %w", w.base+int64(w.end), err)
				return false, w.readErr
			}
			return n > 0, nil
		}
		if n > 0 {
			return true, nil
		}
	}
}

func (w *Walker) skipBOM() error {
	for w.end-w.pos < 3 && !w.eof {
		if _, err := w.fill(); err != nil {
			return err
		}
	}
	if bytes.HasPrefix(w.buf[w.pos:w.end], []byte("\xef\xbb\xbf")) {
		w.pos += 3
	}
	return nil
}

// readString reads the string starting at w.pos (a '"') and returns it decoded,
// with the input offset of its opening quote.
func (w *Walker) readString() ([]byte, int64, error) {
	// Most strings are short and hold no escape: their end is found eight
	// bytes at a time, with one test for both the quote and a backslash,
	// before the search below, which is faster on long strings.
	scan := w.pos + 1
	for lim := min(w.end, scan+shortString); scan+8 <= lim; scan += 8 {
		x := binary.LittleEndian.Uint64(w.buf[scan:])
		if m := hasZeroByte(x^quotes8) | hasZeroByte(x^backslashes8); m != 0 {
			i := scan + bits.TrailingZeros64(m)/8
			if w.buf[i] != '"' {
				break // an escape: the search below reads it
			}
			raw := w.buf[w.pos+1 : i]
			off := w.base + int64(w.pos)
			w.pos = i + 1
			return raw, off, nil
		}
	}
	for {
		q := bytes.IndexByte(w.buf[scan:w.end], '"')
		if q < 0 {
			before, oldEnd := w.pos, w.end
			more, err := w.fill()
			if err != nil {
				return nil, 0, err
			}
			if !more {
				return nil, 0, w.syntax(w.end, "unexpected end of input inside a string (truncated file?)")
			}
			// fill moved the data left by before-w.pos; resume where the search stopped.
			scan = oldEnd - (before - w.pos)
			continue
		}
		q += scan
		bs := 0
		for i := q - 1; i > w.pos && w.buf[i] == '\\'; i-- {
			bs++
		}
		if bs%2 == 1 {
			scan = q + 1
			continue
		}
		start := w.pos
		raw := w.buf[start+1 : q]
		off := w.base + int64(start)
		w.pos = q + 1
		if bytes.IndexByte(raw, '\\') < 0 {
			return raw, off, nil
		}
		return w.unescape(raw), off, nil
	}
}

// shortString is how far readString looks eight bytes at a time.
const shortString = 32

const (
	quotes8      = 0x2222222222222222 // '"' in every byte
	backslashes8 = 0x5c5c5c5c5c5c5c5c // '\\' in every byte
)

// hasZeroByte has the high bit set in the lowest zero byte of x (and maybe in
// higher bytes after it, which the callers ignore).
func hasZeroByte(x uint64) uint64 {
	return (x - 0x0101010101010101) &^ x & 0x8080808080808080
}

// unescape decodes a string's JSON escapes into the walker's scratch buffer.
func (w *Walker) unescape(raw []byte) []byte {
	w.scratch = appendUnescaped(w.scratch[:0], raw)
	return w.scratch
}

// appendUnescaped is AppendUnescapedOffsets without the offsets: the
// walker's decoder of a string.
func appendUnescaped(dst, raw []byte) []byte {
	dst, _ = decodeEscapes(dst, nil, raw, false)
	return dst
}

// AppendUnescapedOffsets appends raw with its JSON escapes decoded to dst. It
// is lenient, for text that only contains JSON fragments: an invalid escape
// keeps its text and an unpaired surrogate becomes U+FFFD, except one of
// U+DC80 to U+DCFF, which becomes the byte 0x80 to 0xFF it stands for.
// That is Python's surrogateescape: os.listdir and os.fsdecode give a file
// name's bytes that are not UTF-8 as those code points, json.dumps writes
// them as "\udce9", and the runtime that reads the session back opens the
// file by its bytes, which is what a reference must resolve to.
//
// It also says where in raw each byte it appends is spelled: for
// every byte appended to dst it appends to offs the offset in raw where the
// character that byte starts is spelled, or -1 for a later byte of a
// character written as one escape (the second byte of "\u00e9" decoded, the
// second to fourth of a surrogate pair). A byte raw holds as itself has its
// own offset, a byte of a multi-byte UTF-8 character too, and so do both
// bytes of an invalid escape, which keeps its text.
//
// So a part text[i:j] of the decoded text is spelled raw[offs[i]:offs[j]]
// when neither is -1 (reading len(raw) for offs[len(text)]), and a caller
// can replace it in raw while every other character keeps its spelling: the
// migration's rewriter changes a reference inside a JSON string that way.
func AppendUnescapedOffsets(dst []byte, offs []int, raw []byte) ([]byte, []int) {
	return decodeEscapes(dst, offs, raw, true)
}

// decodeEscapes is appendUnescaped, and AppendUnescapedOffsets when track
// is set: one decoder for both.
func decodeEscapes(out []byte, offs []int, raw []byte, track bool) ([]byte, []int) {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			// A run of bytes that stand for themselves, up to the next escape.
			k := bytes.IndexByte(raw[i:], '\\')
			if k < 0 {
				k = len(raw) - i
			}
			out = append(out, raw[i:i+k]...)
			if track {
				for j := i; j < i+k; j++ {
					offs = append(offs, j)
				}
			}
			i += k - 1
			continue
		}
		if i+1 >= len(raw) {
			out = append(out, '\\')
			if track {
				offs = append(offs, i)
			}
			continue
		}
		start, n := i, len(out)
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, k := decodeU(raw[i+1:])
			if k == 0 {
				out = append(out, '\\', 'u')
				if track {
					offs = append(offs, start, i)
				}
				continue
			}
			i += k
			if utf16.IsSurrogate(r) {
				r2, k2 := rune(-1), 0
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2, k2 = decodeU(raw[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); k2 > 0 && d != utf8.RuneError {
					r = d
					i += 2 + k2
				} else if 0xdc80 <= r && r <= 0xdcff {
					out = append(out, byte(r-0xdc00))
					break
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, '\\', raw[i])
			if track {
				offs = append(offs, start, i)
			}
			continue
		}
		if track {
			offs = append(offs, start)
			for range len(out) - n - 1 {
				offs = append(offs, -1)
			}
		}
	}
	return out, offs
}

func decodeU(b []byte) (rune, int) {
	if len(b) < 4 {
		return 0, 0
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, 0
		}
	}
	return r, 4
}

// scalar consumes a number or literal and checks its shape.
func (w *Walker) scalar() error {
	i := w.pos
	for {
		if i >= w.end {
			before := w.pos
			more, err := w.fill()
			if err != nil {
				return err
			}
			i -= before - w.pos
			if !more {
				break
			}
			continue
		}
		if isDelim(w.buf[i]) {
			break
		}
		i++
	}
	tok := w.buf[w.pos:i]
	if !validScalar(tok) {
		if len(tok) == 0 {
			return w.syntax(w.pos, fmt.Sprintf("unexpected %q where a value belongs", w.buf[w.pos]))
		}
		if len(tok) > 20 {
			tok = append(tok[:20:20], "…"...)
		}
		return w.syntax(w.pos, fmt.Sprintf("invalid value %q", tok))
	}
	if w.nh != nil && tok[0] != 't' && tok[0] != 'f' && tok[0] != 'n' {
		if err := w.nh.Number(w, tok); err != nil {
			return err
		}
	}
	w.pos = i
	w.afterValue()
	return nil
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', ']', '}', ':', '"', '[', '{':
		return true
	}
	return false
}

func validScalar(tok []byte) bool {
	switch string(tok) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	c := tok[0]
	if c != '-' && (c < '0' || c > '9') {
		return false
	}
	for _, c := range tok[1:] {
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}
