package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/forget"
	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/owner"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/trash"
)

// forgetSchema versions the JSON receipt of `forget`; see docs/forget.md.
const forgetSchema = "mediactl.forget/v1"

func forgetCommand() *cli.Command {
	return &cli.Command{
		Name:      "forget",
		Usage:     "erase one or more owners' media: every blob only their sessions name; blobs another owner's session also names stay",
		UsageText: "mediactl forget [--layout forge|coffer --root DIR] [--store DIR|URL]... [--sessions SOURCE]... --owner ID... [--owners-from FILE] [--owner-by /POINTER|COLUMN] [--trash-dir DIR]... [--delete] [--receipt FILE]",
		Description: `forget answers an erasure request. Owners are attributed as report attributes them
(forge: the task; coffer: the conversation; agent-runs: the user; else the file or row;
--owner-by overrides). It is a dry run unless --delete is given.

With --delete it removes every blob that only those owners' session units name: from
the store, from every trash run (give --trash-dir for each folder outside the stores gc or
migrate kept runs in), and the proven copies in the bucket of migrate's journal (--journal, or the
store's default journals), also a copy that lives only there after migrate
--delete-source and that only their sessions name. A blob another unit also names — the same
bytes uploaded by another user, or its name in another session's text under the retention
rule — stays, and the receipt lists it as kept without naming who keeps it. The store is
locked; the blobs go through a trash run that is deleted only after the sessions changed
meanwhile were read again (a blob a session saved during the run names is put back).
--min-age does not apply: erasure is not retention.

   mediactl forget --owner t-1                              # in a forge work dir: the dry run
   mediactl forget --owner t-1 --delete --receipt /var/lib/mediactl/erasure-4711
   mediactl forget --layout coffer --owners-from ids.txt --delete -o json

An unknown owner is exit 1 and nothing is removed; sessions that could not all be read are
exit 3 and nothing is removed.

` + exitCodesHelp,
		Flags: append(targetFlags(),
			&cli.StringSliceFlag{Name: "owner", Usage: "an owner to forget (repeat for several)"},
			&cli.StringFlag{Name: "owners-from", Usage: "read the owners to forget from this file (- for stdin), one per line (# comments)"},
			&cli.StringFlag{Name: "owner-by", Usage: "attribute session units by this JSON pointer (/user/id) or column (user_id), as report does", EnvVars: envVar("owner-by")},
			&cli.BoolFlag{Name: "delete", Usage: "erase (without it, only say what would be erased and kept)"},
			&cli.StringFlag{Name: "journal", Usage: "migrate's journal: the proven copies of the erased blobs in its bucket are deleted too (default: the store's own journals, if any)"},
			&cli.StringSliceFlag{Name: "trash-dir", Usage: "a folder outside the stores where gc or migrate --trash-dir kept trash runs: the owners' blobs are erased from them too (repeat for several; forget's own run of a store goes into the first given for it)", EnvVars: envVar("trash-dir")},
			&cli.StringFlag{Name: "receipt", Usage: "with --delete, write the receipt to FILE.json and FILE.txt (default: mediactl-forget-TIME in the current directory)"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "documents parsed at once (default: number of CPUs)", EnvVars: envVar("jobs")},
			// Refused with a reason rather than "not defined": erasure is
			// not retention, and an operator used to gc may try it.
			&cli.StringFlag{Name: "min-age", Hidden: true},
		),
		Action: runForget,
	}
}

func runForget(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	if c.NArg() > 0 {
		return usageErr("give the owners with --owner ID", "unexpected argument %q", c.Args().First())
	}
	if c.IsSet("min-age") {
		return usageErr("forget removes an owner's blobs whatever their age", "--min-age does not apply to forget: erasure is not retention")
	}
	owners, err := forgetOwners(c)
	if err != nil {
		return err
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	if len(t.sources) == 0 || len(t.stores) == 0 {
		return usageErr("add --store and --sessions, or --layout", "forget needs at least one store and every session source that may name its blobs")
	}
	rule := owner.Rule{}
	if t.layout != nil {
		rule.Layout = t.layout.Name
	}
	if rule, err = owner.ParseBy(rule, c.String("owner-by")); err != nil {
		return usageErr("give a JSON pointer such as /user/id, or a column name such as user_id", "%v", err)
	}
	receipt := c.String("receipt")
	if c.Bool("delete") && receipt == "" {
		receipt = "mediactl-forget-" + time.Now().UTC().Format("20060102T150405Z")
	}
	if receipt != "" {
		for _, ext := range []string{".json", ".txt"} {
			if err := checkOutputFile("--receipt", receipt+ext); err != nil {
				return err
			}
		}
	}
	opts := forget.Options{Stores: t.scanTargets(), Sources: t.sources, Rule: rule, Owners: owners,
		Delete: c.Bool("delete"), Journal: c.String("journal"), Jobs: c.Int("jobs"),
		Companion: func(s store.Store) func(string) (string, bool) { return t.companion(s) },
		Resolver:  t.resolver, Bases: t.bases}
	for _, dir := range c.StringSlice("trash-dir") {
		if dir != "" {
			opts.TrashDirs = append(opts.TrashDirs, absOr(dir))
		}
	}
	rep, err := forget.Run(c.Context, opts)
	var tde *forget.TrashDirError
	var place *trash.PlaceError
	switch {
	case errors.As(err, &tde) && errors.Is(err, trash.ErrNoTrashFolder):
		return usageErr("give the folder gc or migrate moved the store's blobs into", "no trash folder at %s", tde.Dir)
	case errors.As(err, &tde) && errors.As(err, &place):
		// gc's hint says to choose another folder; forget's holds runs
		// already, so it cannot be chosen anew.
		return usageErr("give the folder gc or migrate kept the runs in, outside the stores; if that folder is inside one, move it out with its .mediactl record and give its new place", "--trash-dir %v", tde.Err)
	case errors.As(err, &tde):
		return trashDirError("--trash-dir", tde.Err)
	case err != nil:
		return usageErr("", "%v", err)
	}

	o := rep.Outcome
	g.log.Info("forget finished", "owners", len(rep.Owners), "erased", len(rep.Erased), "kept", len(rep.Kept), "exit_code", exitFor(o))
	doc := &forgetJSON{envelope: g.envelope(forgetSchema, o), Report: rep}
	if err := presentForget(g, doc); err != nil {
		return err
	}
	for _, dir := range rep.TrashNotSearched {
		g.note("hint: migrate's journal keeps trash runs in %s: add --trash-dir %s to erase from them too", dir, dir)
	}
	if receipt != "" && !rep.DryRun {
		if err := writeForgetReceipt(receipt, doc); err != nil {
			return &exitError{code: exitIncomplete, err: fmt.Errorf("--receipt %s: %w", receipt, err), hint: "what was erased is printed above"}
		}
		fmt.Fprintf(g.stderr, "mediactl: receipt written to %s.json and %s.txt\n", receipt, receipt)
	}
	if o == outcome.Interrupted {
		g.interrupted(int64(len(rep.Erased)), "blobs erased")
	}
	return ended(o)
}

// listName is how an error names --owners-from's list.
func listName(p string) string {
	if p == "-" {
		return "- (stdin)"
	}
	return p
}

// forgetOwners reads --owner and --owners-from.
func forgetOwners(c *cli.Context) ([]string, error) {
	var out []string
	for _, id := range c.StringSlice("owner") {
		if id = strings.TrimSpace(id); id == "" {
			return nil, usageErr("give a non-empty owner id", "--owner \"\"")
		}
		out = append(out, id)
	}
	if p := c.String("owners-from"); p != "" {
		var in io.Reader = c.App.Reader
		if p != "-" {
			f, err := os.Open(p)
			if err != nil {
				return nil, usageErr("give a file with one owner id a line (or - for stdin)", "--owners-from: %v", err)
			}
			defer f.Close()
			in = f
		}
		ids, err := forget.ReadOwners(in)
		var cut *forget.CutListError
		switch {
		case errors.As(err, &cut):
			return nil, usageErr("end the list's last line with a newline; if whatever wrote it stopped, give the whole list", "--owners-from %s: %v", listName(p), err)
		case err != nil:
			return nil, usageErr("give a file with one owner id a line (or - for stdin)", "--owners-from %s: %v", listName(p), err)
		}
		out = append(out, ids...)
	}
	if len(out) == 0 {
		return nil, usageErr("name the owners to forget with --owner ID (repeatable) or --owners-from FILE", "no owner given")
	}
	return out, nil
}
