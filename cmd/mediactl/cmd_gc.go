package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
)

// trashDirFlag is --trash-dir, for gc and its subcommands and for migrate
// --delete-source (when says when it applies, or is empty).
func trashDirFlag(when string) cli.Flag {
	return &cli.StringFlag{Name: "trash-dir", Usage: when + "keep the trash in this local directory (on the store's file system) instead of the store's .mediactl/trash", EnvVars: envVar("trash-dir")}
}

// gcSchema versions the JSON document of `gc -o json`; see docs/gc.md.
const gcSchema = "mediactl.gc/v1"

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:      "gc",
		Usage:     "reclaim unreferenced or expired blobs, reversibly, without ever removing one in use",
		UsageText: "mediactl gc [--layout forge|coffer --root DIR] [--store DIR|URL] [--sessions SOURCE]... [--policy refcount|age] [--delete]",
		Description: `gc plans which blobs can go and, with --delete, moves them into the store's trash
(.mediactl/trash/RUN/), from where 'mediactl gc restore RUN' puts them back and
'mediactl gc purge --older-than 7d' empties old runs. Without --delete nothing changes.

   mediactl gc --layout forge --root /srv/agent                    # plan only (dry run)
   mediactl gc --layout forge --root /srv/agent --delete            # do it
   mediactl gc --store DIR --sessions SRC --policy refcount --min-age 24h --delete
   mediactl gc --store DIR --policy age --max-age 30d --delete      # coffer's 30-day prune
   mediactl gc --store DIR --policy age --max-age 30d --keep-referenced --sessions SRC --delete
   mediactl gc --store DIR --sessions SRC --max-size 50GiB --delete # size cap, oldest first

Policies: refcount (default) removes blobs no session refers to that are older than
--min-age (a blob is written before the session naming it is saved). age removes blobs
older than --max-age, referenced or not, unless --keep-referenced. --max-size removes
unreferenced blobs, oldest first, until the store fits.

Safety: nothing is removed when any session could not be read in full (exit 3); when the
sessions hold no reference at all while the store has blobs, or when the plan exceeds
--max-delete (exit 4, the message names the override); or when another run holds the
store's lock (exit 4). Each blob is checked again right before it is moved.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringFlag{Name: "policy", Value: "refcount", Usage: "refcount (unreferenced and older than --min-age) or age (older than --max-age)", EnvVars: envVar("policy")},
			&cli.StringFlag{Name: "min-age", Value: "24h", Usage: "never remove a blob modified more recently than this (refcount, size cap): 36h, 2d, 1w", EnvVars: envVar("min-age")},
			&cli.StringFlag{Name: "max-age", Usage: "age policy: remove blobs older than this, e.g. 30d", EnvVars: envVar("max-age")},
			&cli.BoolFlag{Name: "keep-referenced", Usage: "age policy: keep blobs that sessions refer to (needs --sessions)", EnvVars: envVar("keep-referenced")},
			&cli.StringFlag{Name: "max-size", Usage: "cap the store at this size (e.g. 50GiB), removing unreferenced blobs oldest first", EnvVars: envVar("max-size")},
			&cli.BoolFlag{Name: "delete", Usage: "remove the planned blobs (without it, only the plan is shown)"},
			trashDirFlag(""),
			&cli.BoolFlag{Name: "no-trash", Usage: "delete permanently instead of moving into the trash (not reversible)"},
			&cli.StringFlag{Name: "max-delete", Value: "50%", Usage: "refuse a plan that removes more than this many blobs, or this percentage of the store"},
			&cli.BoolFlag{Name: "allow-no-references", Usage: "proceed although the sessions refer to no blob at all (usually a wrong --sessions path)"},
			&cli.StringFlag{Name: "plan-out", Usage: "write the plan as JSON to this file", EnvVars: envVar("plan-out")},
			&cli.StringFlag{Name: "metrics-file", Usage: "write Prometheus text-format metrics here, atomically (node_exporter textfile collector)", EnvVars: envVar("metrics-file")},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "removals at once (default: 8 on buckets, 1 on local stores)", EnvVars: envVar("jobs")},
		),
		Action: runGC,
		Subcommands: []*cli.Command{
			{
				Name:      "restore",
				Usage:     "put the blobs of a trash run back into the store",
				ArgsUsage: "RUN",
				Flags:     append(append(targetFlags(), trashDirFlag("")), commonFlags()...),
				Action:    runGCRestore,
			},
			{
				Name:   "purge",
				Usage:  "delete trash runs older than --older-than, for good",
				Flags:  append(append(targetFlags(), &cli.StringFlag{Name: "older-than", Value: "7d", Usage: "purge runs that started longer ago than this", EnvVars: envVar("older-than")}, trashDirFlag("")), commonFlags()...),
				Action: runGCPurge,
			},
			{
				Name:   "runs",
				Usage:  "list the runs in the trash",
				Flags:  append(append(targetFlags(), trashDirFlag("")), commonFlags()...),
				Action: runGCRuns,
			},
		},
	}
}

type gcStoreReport struct {
	Plan   *gc.Plan   `json:"plan"`
	Result *gc.Result `json:"result,omitempty"`
	// Refused says why nothing was removed, when a guard or the lock refused.
	Refused  string `json:"refused,omitempty"`
	Override string `json:"override,omitempty"`
	ExitCode int    `json:"exit_code"`
}

func runGC(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("the subcommands are restore, purge and runs", "unexpected argument %q", c.Args().First())
	}
	opts, guards, err := gcOptions(c)
	if err != nil {
		return err
	}
	if opts.MinAge == gc.NoMinAge && opts.Policy == gc.Refcount {
		g.note("--min-age 0: no minimum age, so a blob whose session is not saved yet may be a candidate; use it only with every agent stopped")
	}
	if os.Getenv("GOGC") == "" { // gc.PlanGCPercent says why
		defer debug.SetGCPercent(debug.SetGCPercent(gc.PlanGCPercent))
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.stores) == 0 {
		return usageErr("add --store DIR|URL, or --layout", "gc needs a store")
	}
	needSessions := opts.Policy == gc.Refcount || opts.KeepReferenced || opts.MaxSize > 0
	if needSessions && len(t.sources) == 0 {
		return usageErr("add --sessions SOURCE (or --layout), or use --policy age without --keep-referenced", "the %s policy needs the sessions, to know which blobs are referenced", opts.Policy)
	}
	// Given sessions, the age policy reads them too: it cannot keep referenced
	// blobs then, but it can say how many references its plan leaves dangling.
	del, noTrash := c.Bool("delete"), c.Bool("no-trash")
	if c.String("trash-dir") != "" {
		if noTrash {
			return usageErr("drop one of them", "--trash-dir and --no-trash contradict each other")
		}
		wrapped, err := withTrashDir(c, t.stores)
		if err != nil {
			return err
		}
		t.stores = wrapped
	}
	start := time.Now()

	var reports []*gcStoreReport
	code := exitOK
	for _, st := range t.stores {
		r := &gcStoreReport{}
		reports = append(reports, r)
		var lock *storelock.Lock
		if del {
			lock, err = storelock.Acquire(c.Context, st, "mediactl gc")
			var le *storelock.LockedError
			if errors.As(err, &le) {
				r.Refused, r.ExitCode = err.Error()+"; if that run is gone, remove "+filepath.Join(st.Location(), store.InternalDir, storelock.Name), exitRefused
				code = worse(code, r.ExitCode)
				continue
			}
			if err != nil {
				return err
			}
		}
		o := opts
		o.Store, o.Sessions, o.Bases, o.Companion = st, t.sources, t.bases, t.companion(st)
		plan, err := gc.MakePlan(c.Context, o)
		if err != nil {
			if lock != nil {
				lock.Release(c.Context)
			}
			return usageErr("", "%v", err)
		}
		r.Plan = plan
		r.ExitCode = exitOK
		if err := plan.Check(guards); err != nil {
			var re *gc.RefusedError
			switch {
			case errors.As(err, &re):
				r.Refused, r.Override, r.ExitCode = re.Reason, re.Override, exitRefused
			case errors.Is(err, gc.ErrIncomplete):
				r.Refused, r.ExitCode = err.Error(), exitIncomplete
			default:
				return err
			}
		}
		if c.Context.Err() != nil {
			r.ExitCode = exitInterrupted
		}
		if del && r.ExitCode == exitOK && plan.Candidates.Len() > 0 {
			bar := newProgress(g, "removing", int64(plan.Candidates.Len()))
			res, err := plan.Execute(c.Context, st, gc.ExecOptions{NoTrash: noTrash, Jobs: c.Int("jobs"), Progress: bar})
			bar.Finish()
			r.Result = res
			switch {
			case errors.Is(err, c.Context.Err()) && err != nil:
				r.ExitCode = exitInterrupted
			case err != nil:
				r.Refused, r.ExitCode = err.Error(), exitIncomplete
			case res != nil && len(res.Failed) > 0:
				r.ExitCode = exitIncomplete
			}
		}
		if lock != nil {
			if err := lock.Release(c.Context); err != nil {
				g.log.Warn("release lock", "store", st.Location(), "error", err)
			}
		}
		code = worse(code, r.ExitCode)
		g.log.Info("gc finished", "store", st.Location(), "candidates", plan.Candidates.Len(), "exit_code", r.ExitCode)
	}

	var plans []*gc.Plan
	for _, r := range reports {
		if r.Plan != nil {
			plans = append(plans, r.Plan)
		}
	}
	if f := c.String("plan-out"); f != "" {
		doc := struct {
			Schema string     `json:"schema"`
			Plans  []*gc.Plan `json:"plans"`
		}{"mediactl.gc-plan/v1", plans}
		if err := writeFileAtomicFunc(f, func(w io.Writer) error { return writeGCJSON(w, doc, true, plans) }); err != nil {
			return fmt.Errorf("--plan-out %s: %w", f, err)
		}
	}
	if f := c.String("metrics-file"); f != "" {
		if err := writeGCMetrics(f, reports, code, time.Since(start)); err != nil {
			return fmt.Errorf("--metrics-file %s: %w", f, err)
		}
	}
	switch g.output {
	case "json", "ndjson":
		doc := struct {
			Schema   string           `json:"schema"`
			Version  string           `json:"mediactl_version"`
			ExitCode int              `json:"exit_code"`
			DryRun   bool             `json:"dry_run"`
			Stores   []*gcStoreReport `json:"stores"`
		}{gcSchema, version(), code, !del, reports}
		if err := writeGCJSON(g.stdout, doc, g.output == "json", plans); err != nil {
			return err
		}
	default:
		if !g.quiet || code != exitOK {
			for _, r := range reports {
				printGC(g.stdout, r, opts, del, g.quiet, c.String("trash-dir"))
			}
		}
	}
	return codeOnly(code)
}

// gcOptions reads the policy flags.
func gcOptions(c *cli.Context) (gc.Options, gc.Guards, error) {
	var o gc.Options
	var gd gc.Guards
	switch p := gc.Policy(c.String("policy")); p {
	case gc.Refcount, gc.Age:
		o.Policy = p
	default:
		return o, gd, usageErr("use --policy refcount or --policy age", "unknown policy %q", p)
	}
	var err error
	if o.MinAge, err = parseAge(c.String("min-age")); err != nil || o.MinAge < 0 {
		return o, gd, usageErr("write a duration such as 24h, 36h, 2d or 1w, or 0 for no minimum age", "bad --min-age %q", c.String("min-age"))
	}
	if o.MinAge == 0 {
		// Zero means zero: the operator asked for no fence (all writers
		// stopped). The library's zero value is its default.
		o.MinAge = gc.NoMinAge
	}
	if s := c.String("max-age"); s != "" {
		if o.MaxAge, err = parseAge(s); err != nil || o.MaxAge <= 0 {
			return o, gd, usageErr("write a duration such as 30d, 2w or 36h", "bad --max-age %q", s)
		}
	}
	if o.Policy == gc.Age && o.MaxAge == 0 {
		return o, gd, usageErr("add --max-age, e.g. --max-age 30d", "the age policy needs --max-age")
	}
	if o.Policy == gc.Refcount && c.IsSet("max-age") {
		return o, gd, usageErr("add --policy age", "--max-age is for the age policy")
	}
	o.KeepReferenced = c.Bool("keep-referenced")
	if o.KeepReferenced && o.Policy != gc.Age {
		return o, gd, usageErr("refcount keeps every referenced blob already; --keep-referenced goes with --policy age", "--keep-referenced without --policy age")
	}
	if s := c.String("max-size"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n == 0 {
			return o, gd, usageErr("write a size such as 50GiB or 10GB", "bad --max-size %q", s)
		}
		if o.Policy != gc.Refcount {
			return o, gd, usageErr("use --max-size with the refcount policy", "--max-size with --policy %s", o.Policy)
		}
		o.MaxSize = int64(n)
	}
	if c.Bool("no-trash") && !c.Bool("delete") {
		return o, gd, usageErr("add --delete, or drop --no-trash", "--no-trash only makes sense with --delete")
	}
	md := strings.TrimSpace(c.String("max-delete"))
	if pct, ok := strings.CutSuffix(md, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil || v <= 0 || v > 100 {
			return o, gd, usageErr("write a count such as 1000 or a percentage such as 50%", "bad --max-delete %q", md)
		}
		gd.MaxDeletePercent = v
	} else {
		v, err := strconv.ParseInt(md, 10, 64)
		if err != nil || v <= 0 {
			return o, gd, usageErr("write a count such as 1000 or a percentage such as 50%", "bad --max-delete %q", md)
		}
		gd.MaxDeleteCount = v
	}
	gd.AllowNoReferences = c.Bool("allow-no-references")
	o.Jobs = c.Int("jobs")
	return o, gd, nil
}

// parseAge reads Go durations and the day and week units operators use for
// retention: 30d, 2w, 36h, 1d12h.
func parseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var total time.Duration
	for s != "" {
		i := strings.IndexAny(s, "dw")
		if i < 0 {
			d, err := time.ParseDuration(s)
			return total + d, err
		}
		n, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		unit := 24 * time.Hour
		if s[i] == 'w' {
			unit *= 7
		}
		total += time.Duration(n * float64(unit))
		s = s[i+1:]
	}
	return total, nil
}

func printGC(w io.Writer, r *gcStoreReport, o gc.Options, del, quiet bool, trashDir string) {
	trashDirArg := ""
	if trashDir != "" {
		trashDirArg = " --trash-dir " + absOr(trashDir)
	}
	p := r.Plan
	if p == nil {
		fmt.Fprintf(w, "refused: %s\n", r.Refused)
		return
	}
	for _, pr := range p.Problems {
		fmt.Fprintf(w, "problem   %s\n", printable(pr))
	}
	what := string(p.Policy)
	switch {
	case p.Policy == gc.Refcount:
		what += ", min age " + fmtAge(p.Fence.Sub(p.Cutoff))
	case p.Policy == gc.Age:
		what += ", max age " + fmtAge(p.Fence.Sub(p.Cutoff))
		if o.KeepReferenced {
			what += ", keeping referenced"
		}
	}
	refs := ""
	if p.SessionsRead {
		refs = fmt.Sprintf(", %s referenced", humanize.Comma(p.Referenced))
	}
	line := fmt.Sprintf("gc %s (%s): %s blobs (%s)%s; plan: remove %s blobs (%s)", p.Store, what,
		humanize.Comma(p.Blobs), humanize.Bytes(uint64(p.Bytes)), refs, humanize.Comma(int64(p.Candidates.Len())), humanize.Bytes(uint64(p.CandidateBytes)))
	if p.Candidates.Len() > 0 {
		line += fmt.Sprintf(", modified %s to %s", p.Oldest.Format("2006-01-02"), p.Newest.Format("2006-01-02"))
	}
	if p.MaxSize > 0 {
		line += fmt.Sprintf("; size after %s of cap %s", humanize.Bytes(uint64(p.SizeAfter)), humanize.Bytes(uint64(p.MaxSize)))
		if !p.CapMet {
			line += " (CAP NOT MET: the rest is referenced or younger than --min-age)"
		}
	}
	if !quiet || r.ExitCode != exitOK {
		fmt.Fprintln(w, line)
	}
	if p.ReferencedCandidates > 0 {
		fmt.Fprintf(w, "WARNING: %s of these blobs are referenced by sessions: their references will dangle (--keep-referenced keeps them)\n", humanize.Comma(p.ReferencedCandidates))
	}
	if r.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", r.Refused)
		if r.Override != "" {
			fmt.Fprintf(w, "  to go ahead anyway, add %s\n", r.Override)
		}
		return
	}
	if res := r.Result; res != nil {
		for _, s := range res.Skipped {
			fmt.Fprintf(w, "kept      %s  %s\n", printable(s.Key), s.Reason)
		}
		for _, s := range res.Failed {
			fmt.Fprintf(w, "failed    %s  %s\n", printable(s.Key), printable(s.Reason))
		}
		if res.Run != "" {
			fmt.Fprintf(w, "moved %s blobs (%s) to the trash, run %s; undo with: mediactl gc restore --store %s%s %s\n",
				humanize.Comma(res.Trashed), humanize.Bytes(uint64(res.Bytes)), res.Run, p.Store, trashDirArg, res.Run)
		} else {
			fmt.Fprintf(w, "deleted %s blobs (%s) permanently\n", humanize.Comma(res.Deleted), humanize.Bytes(uint64(res.Bytes)))
		}
		return
	}
	if !del && p.Candidates.Len() > 0 && !quiet {
		fmt.Fprintln(w, "dry run: nothing removed; add --delete to move these blobs to the trash")
	}
}

// fmtAge renders a retention age the way operators write it: 30d, 36h, 90m.
func fmtAge(d time.Duration) string {
	switch {
	case d >= 24*time.Hour && d%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers never see a partial file.
func writeFileAtomic(path string, data []byte) error {
	return writeFileAtomicFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeFileAtomicFunc is writeFileAtomic with the content written by write.
func writeFileAtomicFunc(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	// Unbuffered: its writers hand over few, large writes (writeGCJSON buffers
	// its own), and a second buffer would only copy them again.
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeGCJSON writes doc as writeJSON (indented) or writeJSONLine would, but
// renders the candidates of its plans one at a time: a plan of a million
// candidates would otherwise be held whole in memory, several times over,
// by the encoder. It encodes doc with the plans' candidates left empty, then
// writes each plan's list where its empty one stands. plans are the plans in
// doc, in the order doc holds them. "candidates" is a key of plans only, and
// no JSON string can hold `"candidates":` (an inner quote is escaped), so the
// k-th such key is the k-th plan's.
func writeGCJSON(w io.Writer, doc any, indent bool, plans []*gc.Plan) error {
	encode := writeJSONLine
	stub := []byte(`"candidates":[]`)
	if indent {
		encode, stub = writeJSON, []byte(`"candidates": []`)
	}
	saved := make([]gc.Candidates, len(plans))
	for i, p := range plans {
		saved[i], p.Candidates = p.Candidates, gc.Candidates{}
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

// writeGCMetrics writes the Prometheus text format for node_exporter's
// textfile collector. The last success time survives failed runs: it is
// carried over from the previous file.
func writeGCMetrics(path string, reports []*gcStoreReport, code int, took time.Duration) error {
	var scanned, bytesScanned, referenced, deleted, trashed, bytesRemoved, errs int64
	for _, r := range reports {
		if p := r.Plan; p != nil {
			scanned += p.Blobs
			bytesScanned += p.Bytes
			referenced += p.Referenced
		}
		if res := r.Result; res != nil {
			deleted += res.Deleted
			trashed += res.Trashed
			bytesRemoved += res.Bytes
			errs += int64(len(res.Failed))
		}
		if r.ExitCode != exitOK {
			errs++
		}
	}
	last := previousMetric(path, "mediactl_gc_last_success_timestamp_seconds")
	if code == exitOK {
		last = strconv.FormatInt(time.Now().Unix(), 10)
	}
	var b strings.Builder
	metric := func(name, help string, v any) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %v\n", name, help, name, name, v)
	}
	metric("mediactl_gc_blobs_scanned", "Blobs in the store when the last run planned.", scanned)
	metric("mediactl_gc_bytes_scanned", "Bytes of those blobs.", bytesScanned)
	metric("mediactl_gc_blobs_referenced", "Blobs that sessions refer to.", referenced)
	metric("mediactl_gc_blobs_deleted", "Blobs deleted permanently by the last run.", deleted)
	metric("mediactl_gc_blobs_trashed", "Blobs moved to the trash by the last run.", trashed)
	metric("mediactl_gc_bytes_removed", "Bytes deleted or trashed by the last run.", bytesRemoved)
	metric("mediactl_gc_errors", "Problems in the last run (refusals, unreadable sessions, failed removals).", errs)
	metric("mediactl_gc_exit_code", "Exit code of the last run.", code)
	metric("mediactl_gc_duration_seconds", "Duration of the last run.", took.Seconds())
	if last != "" {
		metric("mediactl_gc_last_success_timestamp_seconds", "Unix time of the last run that exited 0.", last)
	}
	return writeFileAtomic(path, []byte(b.String()))
}

func previousMetric(path, name string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func runGCRestore(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() != 1 {
		return usageErr("write it as: mediactl gc restore [--store DIR|URL] RUN (flags before RUN); 'mediactl gc runs' lists the runs", "gc restore takes one RUN, %d arguments given", c.NArg())
	}
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return err
	}
	defer closeAll()
	lock, err := storelock.Acquire(c.Context, st, "mediactl gc restore")
	if err != nil {
		return refusedOr(err)
	}
	defer lock.Release(c.Context)
	res, err := gc.Restore(c.Context, st, c.Args().First())
	if err != nil {
		if res == nil {
			return usageErr("'mediactl gc runs' lists the runs", "%v", err)
		}
		return err
	}
	if g.output != "text" {
		return writeJSON(g.stdout, res)
	}
	for _, k := range res.Kept {
		fmt.Fprintf(g.stdout, "kept in trash  %s  %s\n", printable(k.Key), k.Reason)
	}
	if !g.quiet {
		fmt.Fprintf(g.stdout, "restored %s blobs (%s) from run %s\n", humanize.Comma(res.Restored), humanize.Bytes(uint64(res.Bytes)), c.Args().First())
	}
	if len(res.Kept) > 0 {
		return codeOnly(exitIncomplete)
	}
	return nil
}

func runGCPurge(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	age, err := parseAge(c.String("older-than"))
	if err != nil || age < 0 {
		return usageErr("write a duration such as 7d or 36h", "bad --older-than %q", c.String("older-than"))
	}
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return err
	}
	defer closeAll()
	lock, err := storelock.Acquire(c.Context, st, "mediactl gc purge")
	if err != nil {
		return refusedOr(err)
	}
	defer lock.Release(c.Context)
	res, err := gc.Purge(c.Context, st, time.Now().Add(-age))
	if err != nil {
		return err
	}
	if g.output != "text" {
		return writeJSON(g.stdout, res)
	}
	if !g.quiet {
		fmt.Fprintf(g.stdout, "purged %d runs, %s blobs (%s)\n", len(res.Runs), humanize.Comma(res.Blobs), humanize.Bytes(uint64(res.Bytes)))
	}
	return nil
}

func runGCRuns(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	st, closeAll, err := oneStore(c, g)
	if err != nil {
		return err
	}
	defer closeAll()
	runs, err := gc.Runs(c.Context, st)
	if err != nil {
		return err
	}
	if g.output != "text" {
		if runs == nil {
			runs = []gc.TrashRun{}
		}
		return writeJSON(g.stdout, runs)
	}
	for _, r := range runs {
		fmt.Fprintf(g.stdout, "%s  %s blobs  %s\n", r.Run, humanize.Comma(r.Blobs), humanize.Bytes(uint64(r.Bytes)))
	}
	return nil
}

// oneStore opens the targets of a trash subcommand, which works on one store.
func oneStore(c *cli.Context, g *global) (store.Store, func(), error) {
	t, err := openTargets(c, g)
	if err != nil {
		return nil, nil, err
	}
	if len(t.stores) != 1 {
		t.Close()
		return nil, nil, usageErr("give exactly one --store", "this command works on one store, %d given", len(t.stores))
	}
	if c.String("trash-dir") != "" {
		wrapped, err := withTrashDir(c, t.stores)
		if err != nil {
			t.Close()
			return nil, nil, err
		}
		return wrapped[0], t.Close, nil
	}
	return t.stores[0], t.Close, nil
}

// withTrashDir puts the trash of the one local store given into --trash-dir.
// One store only: two stores sharing a trash folder could have their runs
// mixed, and a restore would then put blobs into the wrong store.
func withTrashDir(c *cli.Context, stores []store.Store) ([]store.Store, error) {
	dir := c.String("trash-dir")
	if len(stores) != 1 {
		return nil, usageErr("run gc once per store, each with its own --trash-dir", "--trash-dir works with exactly one store, %d given", len(stores))
	}
	ls, ok := stores[0].(*store.LocalStore)
	if !ok {
		return nil, usageErr("on a bucket the trash is the key prefix .mediactl/trash/; drop --trash-dir", "--trash-dir needs a local store")
	}
	abs := absOr(dir)
	if within(abs, ls.Dir()) {
		return nil, usageErr("choose a directory outside the store, on the same file system", "--trash-dir %s is inside the store %s", dir, ls.Dir())
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("--trash-dir %s: %w", dir, err)
	}
	td, err := store.OpenLocal(abs)
	if err != nil {
		return nil, fmt.Errorf("--trash-dir %s: %w", dir, err)
	}
	return []store.Store{gc.WithTrashDir(ls, td)}, nil
}

func refusedOr(err error) error {
	if errors.Is(err, storelock.ErrLocked) {
		return &exitError{code: exitRefused, err: err, hint: "wait for that run to finish; if it is gone for good, remove the lock file it names"}
	}
	return err
}
