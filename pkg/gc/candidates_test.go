package gc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
)

// v1Plan is the plan's JSON as it was first written, with the candidates a
// plain []Candidate: the compact plan must render exactly the same bytes.
type v1Plan struct {
	Store                string         `json:"store"`
	Policy               gc.Policy      `json:"policy"`
	Fence                time.Time      `json:"fence"`
	Cutoff               time.Time      `json:"cutoff"`
	Blobs                int64          `json:"blobs"`
	Bytes                int64          `json:"bytes"`
	Referenced           int64          `json:"referenced"`
	Candidates           []gc.Candidate `json:"candidates"`
	CandidateBytes       int64          `json:"candidate_bytes"`
	ReferencedCandidates int64          `json:"referenced_candidates"`
	Oldest               time.Time      `json:"oldest,omitempty"`
	Newest               time.Time      `json:"newest,omitempty"`
	MaxSize              int64          `json:"max_size,omitempty"`
	SizeAfter            int64          `json:"size_after"`
	CapMet               bool           `json:"cap_met"`
	SessionsRead         bool           `json:"sessions_read"`
	Scan                 any            `json:"scan,omitempty"`
	Complete             bool           `json:"complete"`
	Problems             []string       `json:"problems"`
}

func asV1(p *gc.Plan) v1Plan {
	v := v1Plan{p.Store, p.Policy, p.Fence, p.Cutoff, p.Blobs, p.Bytes, p.Referenced, slices.Collect(p.Candidates.All()),
		p.CandidateBytes, p.ReferencedCandidates, p.Oldest, p.Newest, p.MaxSize, p.SizeAfter, p.CapMet, p.SessionsRead, nil, p.Complete, p.Problems}
	if p.Scan != nil {
		v.Scan = p.Scan
	}
	if v.Candidates == nil {
		v.Candidates = []gc.Candidate{}
	}
	return v
}

// TestCandidatesJSON: candidates held as ids render as the []Candidate they
// stand for, byte for byte, compact and indented, with keys that JSON
// escapes, in folders, content-addressed or not, referenced or not.
func TestCandidatesJSON(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "mem://")
	must(t, err)
	defer st.Close()
	keys := []string{
		name("a"), name("b"), "u/t/" + name("c"), "u/t/" + strings.TrimSuffix(name("d"), ".png"),
		"coffer-4f1c2a7e.jpg", "a<b>&c.png", "naïve café.jpg", "line\u2028sep.png", "quote\"d.png",
	}
	for _, k := range keys {
		must(t, st.Put(ctx, k, strings.NewReader(k), store.PutOptions{}))
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"text":"see `+name("b")+` and coffer-4f1c2a7e.jpg"}`), 0o600))
	src, err := sessions.Open(ctx, dir, sessions.Options{})
	must(t, err)
	defer src.Close()
	later := time.Now().Add(72 * time.Hour)
	plans := map[string]gc.Options{
		"age with sessions": {Policy: gc.Age, MaxAge: time.Hour, Sessions: []sessions.Source{src}},
		"refcount":          {Sessions: []sessions.Source{src}},
		"age":               {Policy: gc.Age, MaxAge: time.Hour},
		"nothing":           {Policy: gc.Age, MaxAge: 1000 * time.Hour},
	}
	for what, o := range plans {
		o.Store, o.Now = st, later
		p, err := gc.MakePlan(ctx, o)
		must(t, err)
		list := slices.Collect(p.Candidates.All())
		if list == nil {
			list = []gc.Candidate{}
		}
		for _, in := range [][2]string{{"", ""}, {"", "  "}, {"    ", "  "}, {"\t", "\t"}} {
			want, _ := json.MarshalIndent(list, in[0], in[1])
			if in == [2]string{"", ""} {
				want, _ = json.Marshal(list)
			}
			var got bytes.Buffer
			must(t, p.Candidates.WriteJSON(&got, in[0], in[1]))
			if got.String() != string(want) {
				t.Errorf("%s, indent %q: WriteJSON\n%s\nwant\n%s", what, in, got.String(), want)
			}
		}
		got, err := json.MarshalIndent(p, "", "  ")
		must(t, err)
		want, err := json.MarshalIndent(asV1(p), "", "  ")
		must(t, err)
		if string(got) != string(want) {
			t.Errorf("%s: plan JSON\n%s\nwant\n%s", what, got, want)
		}
		if what == "age with sessions" && (p.Candidates.Len() != len(keys) || p.ReferencedCandidates != 2) {
			t.Errorf("%s: %d candidates, %d referenced", what, p.Candidates.Len(), p.ReferencedCandidates)
		}
	}
}

// TestCandidatesOrder: oldest first, then by key, the keys rendered from the
// index in the order their strings sort.
func TestCandidatesOrder(t *testing.T) {
	f := newFixture(t)
	f.session(t, "s.json")
	// Three times, each shared by several blobs, which then go by key.
	base := time.Now().Truncate(time.Second)
	var want []string
	for i := range 40 {
		k := f.blob(t, fmt.Sprint("blob ", i), 48*time.Hour)
		mt := base.Add(-time.Duration(48+i%3) * time.Hour)
		must(t, os.Chtimes(filepath.Join(f.inbound, k), mt, mt))
		want = append(want, fmt.Sprintf("%d %s", 2-i%3, k))
	}
	must(t, os.MkdirAll(filepath.Join(f.inbound, "sub"), 0o700))
	must(t, os.WriteFile(filepath.Join(f.inbound, "sub", name("x")), []byte("x"), 0o600))
	old := base.Add(-49 * time.Hour)
	must(t, os.Chtimes(filepath.Join(f.inbound, "sub", name("x")), old, old))
	want = append(want, "1 sub/"+name("x"))
	slices.Sort(want)
	p := f.plan(t, gc.Options{})
	var got []string
	for c := range p.Candidates.All() {
		got = append(got, fmt.Sprintf("%d %s", 2-(int(base.Sub(c.ModTime)/time.Hour)-48), c.Key))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("order\n%v\nwant\n%v", got, want)
	}
	if !p.Oldest.Equal(p.Candidates.At(0).ModTime) || !p.Newest.Equal(p.Candidates.At(p.Candidates.Len()-1).ModTime) {
		t.Fatal("oldest and newest are not the first and last candidates")
	}
}
