package jsonwalk

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// eventLog records, in order, every callback with what the walker said at that
// moment (depth, key, pointer, offset), and the walk's error.
type eventLog struct{ events []string }

func (l *eventLog) add(w *Walker, format string, a ...any) {
	l.events = append(l.events, fmt.Sprintf("%d %q %s ", w.Depth(), w.Key(), w.Pointer())+fmt.Sprintf(format, a...))
}
func (l *eventLog) Begin(w *Walker, kind byte) error { l.add(w, "begin %c", kind); return nil }
func (l *eventLog) End(w *Walker, kind byte) error   { l.add(w, "end %c", kind); return nil }
func (l *eventLog) String(w *Walker, s []byte, off int64) error {
	l.add(w, "string %q at %d", s, off)
	return nil
}
func (l *eventLog) Name(w *Walker, name []byte) error { l.add(w, "name %q", name); return nil }
func (l *eventLog) Number(w *Walker, num []byte) error {
	l.add(w, "number %s", num)
	return nil
}

// walkEvents walks data whole (members reads most of it) and one byte per
// read (the buffer ends after every byte, so members hands nearly every token
// to step), and returns both logs.
func walkEvents(data []byte) (whole, stepped []string) {
	one, two := &eventLog{}, &eventLog{}
	err := NewBytes(data, one, Limits{MaxDepth: 8}).Run()
	one.events = append(one.events, fmt.Sprintf("error %v", err))
	err = New(iotest.OneByteReader(bytes.NewReader(data)), two, Limits{MaxDepth: 8}).Run()
	two.events = append(two.events, fmt.Sprintf("error %v", err))
	return one.events, two.events
}

// membersCases are objects as runtimes write them, and every way the member
// fast path can be left: nested values, scalars, a missing colon or comma,
// a bad value, white space everywhere, the end of the input.
var membersCases = []string{
	"{\n  \"id\": \"s1\",\n  \"messages\": [\n    {\n      \"role\": \"user\",\n      \"content\": \"see /x/ab.png\",\n      \"n\": 12,\n      \"ok\": true,\n      \"parts\": [{\"uri\":\"a\"}]\n    }\n  ]\n}\n",
	`{"a":"b","c":{"d":"e"},"f":["g"],"h":null,"i":-1.5e3,"j":"k"}`,
	`{"a":"b"}{"c":"d"}` + "\n" + `{"e":1}`,
	`{ "a" : "b" , "c" : "d" }`,
	"{\t\"a\"\r\n:\n\"b\"\n,\n\"c\":\"d\"\n}",
	`{"a\"b":"c\\","d\u0065":"\u00e9"}`,
	`{"a" "b"}`, `{"a":"b" "c":"d"}`, `{"a":"b",}`, `{"a":"b",,"c":1}`, `{"a":]`, `{"a":}`,
	`{"a":tru}`, `{"a":"b"]`, `{"a":"b`, `{"a":"b",`, `{"a"`, `{"a":`, `{"a":"b"`,
	`{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":"deep"}}}}}}}}}`,
	`[{"a":"b"},{"c":"d"}]`, `{"a":[],"b":{},"c":""}`,
}

func TestMembersLikeSteps(t *testing.T) {
	for _, in := range membersCases {
		whole, stepped := walkEvents([]byte(in))
		if !reflect.DeepEqual(whole, stepped) {
			t.Errorf("%q:\nwhole:   %s\nstepped: %s", in, strings.Join(whole, "\n         "), strings.Join(stepped, "\n         "))
		}
	}
}

// FuzzMembersLikeSteps: on any input, reading members whole tells the handler
// exactly what stepping through every token does, and fails the same way.
func FuzzMembersLikeSteps(f *testing.F) {
	for _, in := range membersCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, stepped := walkEvents(data)
		if !reflect.DeepEqual(whole, stepped) {
			t.Fatalf("%q:\nwhole:   %s\nstepped: %s", data, strings.Join(whole, "\n         "), strings.Join(stepped, "\n         "))
		}
	})
}
