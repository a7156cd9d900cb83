package report

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/mediactl/mediactl/pkg/mediatype"
	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/store"
)

// StoreReport is the report on one store.
type StoreReport struct {
	Store string `json:"store"`
	// Kind is "local" (a directory) or "bucket".
	Kind       string `json:"kind"`
	Stored     Count  `json:"stored"`
	Referenced Count  `json:"referenced"`
	Orphaned   Count  `json:"orphaned"`
	Shared     Count  `json:"shared"`
	TrashRuns  int    `json:"trash_runs"`
	InTrash    Count  `json:"in_trash"`
	Marked     Count  `json:"marked"`
	Corrupt    *Count `json:"corrupt,omitempty"`

	// ByModified buckets the blobs by age of their modification time;
	// ByLastReference the referenced ones by the newest time of a session
	// unit naming them ("unknown" when no unit said when it was active,
	// "never" for the orphans).
	ByModified      []AgeBucket `json:"by_modified"`
	ByLastReference []AgeBucket `json:"by_last_reference"`
	ByMediaType     []TypeCount `json:"by_media_type"`
	BySize          []SizeClass `json:"by_size"`
	Growth          Growth      `json:"growth"`
	Policies        []Policy    `json:"policies"`

	Problems []string `json:"problems"`
	Complete bool     `json:"complete"`
}

// AgeBucket counts the blobs of one age, referenced and orphaned.
type AgeBucket struct {
	Bucket     string `json:"bucket"`
	Referenced Count  `json:"referenced"`
	Orphaned   Count  `json:"orphaned"`
}

// TypeCount counts the blobs of one media type (by extension).
type TypeCount struct {
	Type string `json:"type"`
	Count
}

// SizeClass counts the blobs of one size class.
type SizeClass struct {
	Class string `json:"class"`
	Count
}

// Growth is what the store gained, by modification time of the blobs it
// still holds, over the last GrowthDays days.
type Growth struct {
	Days  []Period `json:"days"`
	Weeks []Period `json:"weeks"`
	// BytesPerDay is the mean over the window.
	BytesPerDay float64 `json:"bytes_per_day"`
	// Filesystem is set for a local store: the file system it is on, and
	// the days until it is full at BytesPerDay (absent when it does not
	// grow).
	Filesystem *Filesystem `json:"filesystem,omitempty"`
}

// Period is one day or week of growth; Start is its first day (UTC).
type Period struct {
	Start string `json:"start"`
	Count
}

// Filesystem is the space of a local store's file system.
type Filesystem struct {
	Size          uint64   `json:"size"`
	Free          uint64   `json:"free"`
	DaysUntilFull *float64 `json:"days_until_full,omitempty"`
}

// Policy is what one gc policy would free now.
type Policy struct {
	// Name is the policy as gc's flags spell it: "refcount",
	// "age 30d", "age 30d --keep-referenced", "max-size 1.0 GiB".
	Name string `json:"name"`
	Free Count  `json:"free"`
	// Referenced counts the blobs it frees that sessions still name: their
	// references would dangle.
	Referenced int64 `json:"referenced"`
	// CapMet, for a size cap, says whether the store would get under it.
	CapMet *bool `json:"cap_met,omitempty"`
}

// GrowthDays is the window of Growth.
const GrowthDays = 90

// Ages are the age buckets' upper bounds; the last bucket, "older", has none.
var Ages = []struct {
	Name  string
	Limit time.Duration
}{{"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}, {"30d", 30 * 24 * time.Hour}, {"90d", 90 * 24 * time.Hour}, {"1y", 365 * 24 * time.Hour}, {"older", 0}}

// Sizes are the size classes' upper bounds (exclusive); the last has none.
var Sizes = []struct {
	Name  string
	Limit int64
}{{"<16 KiB", 16 << 10}, {"<256 KiB", 256 << 10}, {"<1 MiB", 1 << 20}, {"<16 MiB", 16 << 20}, {"<256 MiB", 256 << 20}, {"≥256 MiB", 0}}

// PolicyAges are the ages the age policy is evaluated at.
var PolicyAges = []int{7, 30, 90}

func ageBucket(age time.Duration) int {
	for i, a := range Ages[:len(Ages)-1] {
		if age < a.Limit {
			return i
		}
	}
	return len(Ages) - 1
}

func sizeClass(size int64) int {
	for i, s := range Sizes[:len(Sizes)-1] {
		if size < s.Limit {
			return i
		}
	}
	return len(Sizes) - 1
}

// moreTypes are media types by extension beyond package mediatype's, so
// that a report of a chat store says audio and video too.
var moreTypes = map[string]string{
	".heic": "image/heic", ".heif": "image/heif", ".svg": "image/svg+xml", ".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff",
	".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm", ".mkv": "video/x-matroska",
	".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/opus", ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".wav": "audio/wav",
	".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".html": "text/html", ".json": "application/json",
	".zip": "application/zip", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

// mediaType is the media type a key's extension claims: "none" without
// one, "other" for one this table does not know (keys are untrusted: the
// set of types stays small).
func mediaType(key string) string {
	ext := strings.ToLower(path.Ext(key))
	if ext == "" {
		return "none"
	}
	if t := mediatype.ForExt(ext); t != "" {
		return t
	}
	if t, ok := moreTypes[ext]; ok {
		return t
	}
	return "other"
}

// storeReport adds up one store.
func storeReport(ctx context.Context, st store.Store, r *retain.Retention, own *storeOwn, companion func(string) (string, bool), opts Options) *StoreReport {
	sr := &StoreReport{Store: st.Location(), Kind: "bucket", Complete: true, Problems: []string{}, Shared: own.shared}
	if _, ok := st.(store.Local); ok {
		sr.Kind = "local"
	}
	now := opts.Now
	byMod := make([]AgeBucket, len(Ages))
	byRef := make([]AgeBucket, len(Ages)+2) // + unknown, never
	for i, a := range Ages {
		byMod[i].Bucket, byRef[i].Bucket = a.Name, a.Name
	}
	byRef[len(Ages)].Bucket, byRef[len(Ages)+1].Bucket = "unknown", "never"
	types := map[string]*Count{}
	sizes := make([]SizeClass, len(Sizes))
	for i, s := range Sizes {
		sizes[i].Class = s.Name
	}
	today := now.UTC().Truncate(24 * time.Hour)
	days := growthDays(now)
	refcount := Policy{Name: "refcount"}
	if opts.MinAge != retain.DefaultMinAge {
		refcount.Name = "refcount --min-age " + retain.FormatAge(opts.MinAge)
	}
	refCutoff := now.Add(-opts.MinAge)
	ages := make([]Policy, 2*len(PolicyAges))
	for i, d := range PolicyAges {
		ages[2*i].Name = fmt.Sprintf("age %dd", d)
		ages[2*i+1].Name = fmt.Sprintf("age %dd --keep-referenced", d)
	}
	var capIDs []uint32
	for id := range r.Len() {
		size, mod := r.Size(id), r.ModTime(id)
		kept := r.KeptID(id)
		sr.Stored.add(size)
		b := ageBucket(now.Sub(mod))
		if kept {
			sr.Referenced.add(size)
			byMod[b].Referenced.add(size)
			switch t := own.lastRef[id]; {
			case t > 0:
				byRef[ageBucket(now.Sub(time.Unix(0, t)))].Referenced.add(size)
			default:
				byRef[len(Ages)].Referenced.add(size)
			}
		} else {
			sr.Orphaned.add(size)
			byMod[b].Orphaned.add(size)
			byRef[len(Ages)+1].Orphaned.add(size)
		}
		t := mediaType(r.Key(id))
		if types[t] == nil {
			types[t] = &Count{}
		}
		types[t].add(size)
		sizes[sizeClass(size)].add(size)
		if d := int(today.Sub(mod.UTC().Truncate(24*time.Hour)) / (24 * time.Hour)); d >= 0 && d < GrowthDays {
			days[GrowthDays-1-d].add(size)
		}
		if !kept && !r.Young(id, refCutoff) {
			refcount.Free.add(size)
			capIDs = append(capIDs, uint32(id))
		}
		for i, d := range PolicyAges {
			if r.Young(id, now.Add(-time.Duration(d)*24*time.Hour)) {
				continue
			}
			ages[2*i].Free.add(size)
			if kept {
				ages[2*i].Referenced++
			} else {
				ages[2*i+1].Free.add(size)
			}
		}
	}
	sr.ByModified, sr.ByLastReference, sr.BySize = byMod, byRef, sizes
	for t, c := range types {
		sr.ByMediaType = append(sr.ByMediaType, TypeCount{Type: t, Count: *c})
	}
	sr.ByMediaType = sortTypes(sr.ByMediaType)

	// Growth.
	var grown int64
	for _, d := range days {
		grown += d.Bytes
	}
	sr.Growth.Days = days
	sr.Growth.Weeks = weeksOf(days)
	sr.Growth.BytesPerDay = float64(grown) / GrowthDays
	if l, ok := st.(store.Local); ok {
		if size, free, err := statfs(l.Dir()); err == nil {
			fs := &Filesystem{Size: size, Free: free}
			if !opts.Shard.Sharded() {
				fs.DaysUntilFull = daysUntilFull(free, sr.Growth.BytesPerDay)
			}
			sr.Growth.Filesystem = fs
		}
	}

	// Policies: refcount, age with and without --keep-referenced, a cap
	// (not on a shard: see NoteSizeCap).
	sr.Policies = append(sr.Policies, refcount)
	sr.Policies = append(sr.Policies, ages...)
	if !opts.Shard.Sharded() {
		sr.Policies = append(sr.Policies, sizeCap(r, capIDs, sr.Stored.Bytes, opts.MaxSize))
	}

	// The trash, the marks, and with --verify the content.
	runs, in, marked, err := trashOf(ctx, st, opts.Shard)
	sr.TrashRuns, sr.InTrash, sr.Marked = runs, in, marked
	if err != nil {
		sr.Complete = false
		sr.Problems = append(sr.Problems, fmt.Sprintf("%s: reading the trash: %v", sr.Store, err))
	}
	if opts.Verify {
		c, err := verifyStore(ctx, st, opts.Jobs, opts.Shard, companion)
		sr.Corrupt = c
		if err != nil {
			sr.Complete = false
			sr.Problems = append(sr.Problems, err.Error())
		}
	}
	return sr
}

// daysUntilFull is how long free bytes last at bytesPerDay: nil when the
// store does not grow.
func daysUntilFull(free uint64, bytesPerDay float64) *float64 {
	if bytesPerDay <= 0 {
		return nil
	}
	d := float64(free) / bytesPerDay
	return &d
}

// sizeCap is what the size cap limit (half the store when 0) would free:
// the candidates (ids), oldest first, until the store fits.
func sizeCap(r *retain.Retention, ids []uint32, stored, limit int64) Policy {
	if limit <= 0 {
		limit = stored / 2
	}
	r.SortByTime(ids, 0)
	taken, after := r.TakeOldest(ids, 0, stored, limit)
	capped := Policy{Name: "max-size " + humanize.IBytes(uint64(limit))}
	for _, id := range taken {
		capped.Free.add(r.Size(int(id)))
	}
	met := after <= limit
	capped.CapMet = &met
	return capped
}

// growthDays are the GrowthDays days up to now's (UTC), oldest first, empty.
func growthDays(now time.Time) []Period {
	today := now.UTC().Truncate(24 * time.Hour)
	days := make([]Period, GrowthDays)
	for i := range days {
		days[i].Start = today.AddDate(0, 0, -(GrowthDays - 1 - i)).Format(time.DateOnly)
	}
	return days
}

// weeksOf adds up days by week, counted back from the newest day.
func weeksOf(days []Period) []Period {
	var weeks []Period
	for w := 0; w < (len(days)+6)/7; w++ {
		end := len(days) - 7*w // exclusive, counted from the oldest day
		start := max(end-7, 0)
		p := Period{Start: days[start].Start}
		for _, d := range days[start:end] {
			p.Blobs += d.Blobs
			p.Bytes += d.Bytes
		}
		weeks = append([]Period{p}, weeks...)
	}
	return weeks
}

// sortTypes orders media types by bytes, most first, then by name.
func sortTypes(types []TypeCount) []TypeCount {
	slices.SortFunc(types, func(a, b TypeCount) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Type, b.Type))
	})
	if types == nil {
		types = []TypeCount{}
	}
	return types
}
