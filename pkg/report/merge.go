package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/shard"
	"github.com/mediactl/mediactl/pkg/usage"
)

// Schema names the JSON document of a report (`mediactl report -o json`):
// the command's envelope and the Report's fields beside it.
const Schema = "mediactl.report/v2"

// Merged says which shards' reports a merged report is made of.
type Merged struct {
	// Of is N, how many shards the split has.
	Of int `json:"of"`
	// Shards are the shards merged, "K/N", in order.
	Shards []string `json:"shards"`
	// Missing are the shards of the split whose report was not given:
	// their blobs are not counted, and the report is incomplete.
	Missing []string `json:"missing"`
}

// Input is a shard's report and where it came from, for messages.
type Input struct {
	Name   string
	Report *Report
}

// MergeOptions configure Merge.
type MergeOptions struct {
	// MaxListed caps the merged lists (unattributed units, problems); zero
	// means 10,000.
	MaxListed int
}

// SchemaError is a document that is not a report of a schema Decode reads.
type SchemaError struct {
	Schema string // "" when the document has none
}

func (e *SchemaError) Error() string {
	if e.Schema == "" {
		return "not a report document: no schema (write it with report --shard K/N -o json)"
	}
	return fmt.Sprintf("schema %q is not one this version reads (%s)", e.Schema, Schema)
}

// Is makes a SchemaError a usage error.
func (e *SchemaError) Is(target error) bool { return target == usage.Err }

// MergeError says why reports cannot be merged, and which.
type MergeError struct {
	// Reason is what is wrong: "reports of different splits", ….
	Reason string
	// Inputs name the reports concerned, each with what it says
	// ("a.json (shard 1/3)").
	Inputs []string
}

func (e *MergeError) Error() string {
	return "cannot merge " + e.Reason + ": " + strings.Join(e.Inputs, ", ")
}

// Is makes a MergeError a usage error.
func (e *MergeError) Is(target error) bool { return target == usage.Err }

// Decode reads a report's JSON document and checks its schema.
func Decode(r io.Reader) (*Report, error) {
	doc := struct {
		Schema string `json:"schema"`
		*Report
	}{Report: &Report{}}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, usage.Errorf("not a report document: %w", err)
	}
	if doc.Schema != Schema {
		return nil, &SchemaError{Schema: doc.Schema}
	}
	return doc.Report, nil
}

// mergeNotes are the notes of a merged report.
var mergeNotes = []string{
	"units: each shard counted an owner's session units over the whole store; the merged report takes the largest (they differ only when the sessions changed between the shards' runs)",
	"ages count from each shard's own time; now is the latest of them",
	"the max-size policy is left out: a size cap decides over all the blobs at once, oldest first, which no shard saw; run report without --shard for it",
}

// Merge makes the report of the whole store from the reports of the shards
// of one split: blob counts, bytes, references, tables and policies add up
// (every blob and every reference is in exactly one shard), an owner's
// units and last activity are the largest a shard saw (every shard counts
// them over the whole store), and the days until full are reckoned from the
// merged growth. Reports of different splits, stores, session sources,
// owner rules or policies, a shard given twice and a report made without
// --shard are refused with a *MergeError. A shard of the split not given
// makes the merged report incomplete (Merged.Missing, Problems), and so does
// a shard's report that is incomplete or was interrupted (it counts with
// what it holds).
func Merge(in []Input, opts MergeOptions) (*Report, error) {
	if len(in) == 0 {
		return nil, usage.Errorf("report merge: no report given")
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 10000
	}
	specs, err := checkInputs(in)
	if err != nil {
		return nil, err
	}
	// In shard order, the newest report's now, sources and file systems.
	order := make([]int, len(in))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(specs[a].K, specs[b].K) })
	// The stores, of the reports that hold them (an interrupted shard's
	// may not: it counts as read in part); the newest of them says what
	// was read and the file systems.
	var full []int
	newest := -1
	for _, i := range order {
		if !cut(in[i].Report) {
			full = append(full, i)
			if newest < 0 || in[i].Report.Now.After(in[newest].Report.Now) {
				newest = i
			}
		}
	}
	if newest < 0 {
		newest = order[0]
	}
	n := specs[0].N
	out := &Report{Now: in[newest].Report.Now, Sources: in[newest].Report.Sources, Rule: in[newest].Report.Rule,
		Complete: true, Problems: []string{}, Owners: []*OwnerStats{},
		Merged: &Merged{Of: n, Shards: []string{}, Missing: []string{}}}
	if n > 1 {
		out.Notes = mergeNotes
	}
	given := make([]bool, n)
	for _, i := range order {
		r, s := in[i].Report, specs[i]
		given[s.K] = true
		out.Merged.Shards = append(out.Merged.Shards, s.String())
		for _, p := range r.Problems {
			out.Problems = append(out.Problems, "shard "+s.String()+": "+p)
		}
		if r.Interrupted {
			out.Problems = append(out.Problems, fmt.Sprintf("shard %s was interrupted: its counts are partial", s))
		}
		out.Complete = out.Complete && r.Complete && !r.Interrupted
		out.Truncated = out.Truncated || r.Truncated
		out.Totals.DanglingReferences += r.Totals.DanglingReferences
		out.Totals.DanglingBlobs += r.Totals.DanglingBlobs
	}
	for k, ok := range given {
		if !ok {
			s := shard.Spec{K: k, N: n}.String()
			out.Merged.Missing = append(out.Merged.Missing, s)
			out.Problems = append(out.Problems, fmt.Sprintf("shard %s is missing: its blobs are not counted", s))
			out.Complete = false
		}
	}
	if len(out.Problems) > opts.MaxListed {
		out.Problems, out.Truncated = out.Problems[:opts.MaxListed], true
	}

	if len(full) > 0 {
		for si := range in[full[0]].Report.Stores {
			parts := make([]*StoreReport, 0, len(full))
			labels := make([]string, 0, len(full))
			for _, i := range full {
				parts = append(parts, in[i].Report.Stores[si])
				labels = append(labels, specs[i].String())
			}
			sr := mergeStore(parts, labels, in[newest].Report.Stores[si], out.Now)
			out.Stores = append(out.Stores, sr)
			out.Totals.addStore(sr)
		}
	}
	mergeOwners(in, order, out, opts.MaxListed)
	return out, nil
}

// checkInputs refuses reports that are not the shards of one split of the
// same stores, read alike, and returns their shards.
func checkInputs(in []Input) ([]shard.Spec, error) {
	specs := make([]shard.Spec, len(in))
	var notShards []string
	for i, x := range in {
		r := x.Report
		s, err := shard.Parse(r.Shard, nil)
		if r.Shard == "" || r.Merged != nil || err != nil {
			notShards = append(notShards, x.Name)
			continue
		}
		specs[i] = s
	}
	if len(notShards) > 0 {
		return nil, &MergeError{Reason: "reports made without --shard K/N", Inputs: notShards}
	}
	named := func(i int, what string) string { return fmt.Sprintf("%s (%s)", in[i].Name, what) }
	// differ refuses reports whose key differs, naming each with what it
	// says (said, or key); an interrupted shard's report without stores
	// says nothing but its shard (all is false for what it may lack).
	differ := func(reason string, said, key func(r *Report) string, all bool) error {
		if key == nil {
			key = said
		}
		var those []int
		for i := range in {
			if all || !cut(in[i].Report) {
				those = append(those, i)
			}
		}
		for _, i := range those {
			if key(in[i].Report) != key(in[those[0]].Report) {
				var names []string
				for _, j := range those {
					names = append(names, named(j, said(in[j].Report)))
				}
				return &MergeError{Reason: reason, Inputs: names}
			}
		}
		return nil
	}
	if err := differ("reports of different splits", func(r *Report) string {
		s, _ := shard.Parse(r.Shard, nil)
		return fmt.Sprintf("shard %s of a split into %d", s, s.N)
	}, func(r *Report) string {
		s, _ := shard.Parse(r.Shard, nil)
		return strconv.Itoa(s.N)
	}, true); err != nil {
		return nil, err
	}
	seen := map[int]int{}
	for i, s := range specs {
		if j, ok := seen[s.K]; ok {
			return nil, &MergeError{Reason: fmt.Sprintf("shard %s given twice", s), Inputs: []string{in[j].Name, in[i].Name}}
		}
		seen[s.K] = i
	}
	checks := []struct {
		reason string
		of     func(r *Report) string
	}{
		{"reports of different stores", func(r *Report) string {
			var l []string
			for _, s := range r.Stores {
				l = append(l, s.Store+" ("+s.Kind+")")
			}
			return "stores " + strings.Join(l, ", ")
		}},
		{"reports of different session sources", func(r *Report) string {
			var l []string
			for _, s := range r.Sources {
				l = append(l, s.Source)
			}
			return "sessions " + strings.Join(l, ", ")
		}},
		{"reports of different owner rules (--owner-by)", func(r *Report) string { return "owners by " + r.Rule }},
		{"reports of different policies (--min-age)", func(r *Report) string {
			var l []string
			for _, s := range r.Stores {
				for _, p := range s.Policies {
					l = append(l, p.Name)
				}
			}
			return "policies " + strings.Join(l, ", ")
		}},
		{"reports made with and without --verify", func(r *Report) string {
			if r.Totals.Corrupt != nil {
				return "with --verify"
			}
			return "without --verify"
		}},
	}
	for _, c := range checks {
		if err := differ(c.reason, c.of, nil, false); err != nil {
			return nil, err
		}
	}
	return specs, nil
}

// cut reports whether r is a report an interrupt cut short before it said
// anything of its stores.
func cut(r *Report) bool { return r.Interrupted && len(r.Stores) == 0 }

// mergeStore adds up one store's reports of the shards (labels: their
// shards); newest is the newest report's, whose file system is the one
// reported, and now the merged report's time.
func mergeStore(parts []*StoreReport, labels []string, newest *StoreReport, now time.Time) *StoreReport {
	sum := func(a *Count, b Count) { a.Blobs += b.Blobs; a.Bytes += b.Bytes }
	out := &StoreReport{Store: parts[0].Store, Kind: parts[0].Kind, Complete: true, Problems: []string{}}
	byMod := map[string]*AgeBucket{}
	byRef := map[string]*AgeBucket{}
	types := map[string]*Count{}
	sizes := map[string]*Count{}
	days := map[string]*Count{}
	policies := map[string]*Policy{}
	for i, p := range parts {
		sum(&out.Stored, p.Stored)
		sum(&out.Referenced, p.Referenced)
		sum(&out.Orphaned, p.Orphaned)
		sum(&out.Shared, p.Shared)
		sum(&out.InTrash, p.InTrash)
		sum(&out.Marked, p.Marked)
		out.TrashRuns = max(out.TrashRuns, p.TrashRuns)
		if p.Corrupt != nil {
			if out.Corrupt == nil {
				out.Corrupt = &Count{}
			}
			sum(out.Corrupt, *p.Corrupt)
		}
		out.Complete = out.Complete && p.Complete
		for _, x := range p.Problems {
			out.Problems = append(out.Problems, "shard "+labels[i]+": "+x)
		}
		addAges(&out.ByModified, byMod, p.ByModified)
		addAges(&out.ByLastReference, byRef, p.ByLastReference)
		for _, t := range p.ByMediaType {
			if types[t.Type] == nil {
				types[t.Type] = &Count{}
			}
			sum(types[t.Type], t.Count)
		}
		for _, c := range p.BySize {
			if sizes[c.Class] == nil {
				out.BySize = append(out.BySize, SizeClass{Class: c.Class})
				sizes[c.Class] = &Count{}
			}
			sum(sizes[c.Class], c.Count)
		}
		for _, d := range p.Growth.Days {
			if days[d.Start] == nil {
				days[d.Start] = &Count{}
			}
			sum(days[d.Start], d.Count)
		}
		for _, x := range p.Policies {
			if policies[x.Name] == nil {
				out.Policies = append(out.Policies, Policy{Name: x.Name})
				policies[x.Name] = &Policy{}
			}
			sum(&policies[x.Name].Free, x.Free)
			policies[x.Name].Referenced += x.Referenced
			if len(parts) == 1 {
				// The size cap of a "split" into one: the whole store's.
				policies[x.Name].CapMet = x.CapMet
			}
		}
	}
	for i := range out.BySize {
		out.BySize[i].Count = *sizes[out.BySize[i].Class]
	}
	for t, c := range types {
		out.ByMediaType = append(out.ByMediaType, TypeCount{Type: t, Count: *c})
	}
	out.ByMediaType = sortTypes(out.ByMediaType)
	for i := range out.Policies {
		p := policies[out.Policies[i].Name]
		out.Policies[i].Free, out.Policies[i].Referenced, out.Policies[i].CapMet = p.Free, p.Referenced, p.CapMet
	}

	// The growth window ends on the merged report's day: a shard that ran
	// the day before gives the days they share.
	out.Growth.Days = growthDays(now)
	var grown int64
	for i, d := range out.Growth.Days {
		if c := days[d.Start]; c != nil {
			out.Growth.Days[i].Count = *c
			grown += c.Bytes
		}
	}
	out.Growth.Weeks = weeksOf(out.Growth.Days)
	out.Growth.BytesPerDay = float64(grown) / GrowthDays
	if fs := newest.Growth.Filesystem; fs != nil {
		out.Growth.Filesystem = &Filesystem{Size: fs.Size, Free: fs.Free, DaysUntilFull: daysUntilFull(fs.Free, out.Growth.BytesPerDay)}
	}
	return out
}

// addAges adds the age buckets of one shard to dst, by bucket name (idx
// holds dst's buckets).
func addAges(dst *[]AgeBucket, idx map[string]*AgeBucket, src []AgeBucket) {
	if len(idx) == 0 {
		*dst = make([]AgeBucket, 0, len(src))
		for _, b := range src {
			*dst = append(*dst, AgeBucket{Bucket: b.Bucket})
		}
		for i := range *dst {
			idx[(*dst)[i].Bucket] = &(*dst)[i]
		}
	}
	for _, b := range src {
		if d := idx[b.Bucket]; d != nil {
			d.Referenced.Blobs += b.Referenced.Blobs
			d.Referenced.Bytes += b.Referenced.Bytes
			d.Orphaned.Blobs += b.Orphaned.Blobs
			d.Orphaned.Bytes += b.Orphaned.Bytes
		}
	}
}

// mergeOwners adds up the owners and the unattributed of the shards.
func mergeOwners(in []Input, order []int, out *Report, maxListed int) {
	byID := map[string]*OwnerStats{}
	sum := func(a *Count, b Count) { a.Blobs += b.Blobs; a.Bytes += b.Bytes }
	var units []owner.Unit
	seenUnit := map[owner.Unit]bool{}
	u := &out.Unattributed
	for _, i := range order {
		r := in[i].Report
		for _, o := range r.Owners {
			m := byID[o.ID]
			if m == nil {
				m = &OwnerStats{ID: o.ID}
				byID[o.ID] = m
				out.Owners = append(out.Owners, m)
			}
			if m.Agent == "" {
				m.Agent = o.Agent
			}
			m.Units = max(m.Units, o.Units)
			m.References += o.References
			sum(&m.Referenced, o.Referenced)
			sum(&m.Exclusive, o.Exclusive)
			if o.LastActivity != nil && (m.LastActivity == nil || o.LastActivity.After(*m.LastActivity)) {
				t := *o.LastActivity
				m.LastActivity = &t
			}
		}
		x := r.Unattributed
		u.Units = max(u.Units, x.Units)
		u.References += x.References
		sum(&u.Referenced, x.Referenced)
		sum(&u.TextOnly, x.TextOnly)
		sum(&u.Exclusive, x.Exclusive)
		for _, unit := range x.UnitList {
			if !seenUnit[unit] {
				seenUnit[unit] = true
				units = append(units, unit)
			}
		}
	}
	sortOwners(out.Owners)
	out.OwnerCount = len(out.Owners)
	slices.SortFunc(units, func(a, b owner.Unit) int { return cmp.Compare(a.String(), b.String()) })
	if len(units) > maxListed {
		units, out.Truncated = units[:maxListed], true
	}
	u.UnitList = append([]owner.Unit{}, units...)
}

// sortOwners orders owners as a report lists them: most referenced bytes
// first, then most exclusive bytes, then by id.
func sortOwners(owners []*OwnerStats) {
	slices.SortFunc(owners, func(a, b *OwnerStats) int {
		return cmp.Or(cmp.Compare(b.Referenced.Bytes, a.Referenced.Bytes), cmp.Compare(b.Exclusive.Bytes, a.Exclusive.Bytes), cmp.Compare(a.ID, b.ID))
	})
}
