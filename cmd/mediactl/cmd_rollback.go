package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/migrate"
	"github.com/mediactl/mediactl/pkg/outcome"
)

// rollbackSchema versions the JSON document of `migrate rollback -o json`.
const rollbackSchema = "mediactl.migrate-rollback/v1"

func rollbackCommand() *cli.Command {
	return &cli.Command{
		Name:  "rollback",
		Usage: "restore every session reference a migration rewrote, byte for byte, and put deleted sources back",
		Description: `rollback reads the migration's journal and restores each rewritten session unit: exactly
as it was when nothing changed it since, reference by reference when the agent wrote to it
since. Sources moved to the trash by --delete-source are put back; a source whose trash
run was purged since is made again from its proven copy (its sha256 checked), and when one
cannot be, no session is changed (exit 4): a session must not point at a file that is gone.
The copies in the bucket are left in place. rollback holds the store's lock.

   mediactl migrate rollback --layout forge --root /srv/agent --journal FILE
   mediactl migrate rollback --sessions sqlite:coffer.db --journal FILE

` + exitCodesHelp,
		Flags: append(append(targetFlags(),
			&cli.StringFlag{Name: "journal", Usage: "the migration's journal (required)", EnvVars: envVar("journal")},
			&cli.IntFlag{Name: "max-listed", Value: 10000, Usage: "list at most this many problems (counts stay exact)", EnvVars: envVar("max-listed")},
		), commonFlags()...),
		Action: runMigrateRollback,
	}
}

type rollbackDocument struct {
	envelope
	*migrate.RollbackReport
	Refused string `json:"refused,omitempty"`
}

func runMigrateRollback(c *cli.Context) error {
	g, err := globals(c)
	if err != nil {
		return err
	}
	jpath := c.String("journal")
	if jpath == "" {
		return usageErr("add --journal FILE (the path the migration printed)", "rollback needs the migration's journal")
	}
	if fi, err := os.Stat(jpath); err != nil || !fi.Mode().IsRegular() {
		return usageErr("give the path the migration printed as 'journal:'", "no journal at %s", jpath)
	}
	t, err := openTargets(c, g)
	if err != nil {
		return err
	}
	defer t.Close()
	opts := migrate.RollbackOptions{JournalPath: jpath, MaxListed: c.Int("max-listed"), Command: "mediactl migrate rollback"}
	if len(t.sessionSpecs) > 0 {
		if opts.Rewriters, err = t.openRewriters(c); err != nil {
			return err
		}
		defer closeRewriters(opts.Rewriters)
	}
	rep, err := migrate.Rollback(c.Context, opts)
	var ns *migrate.NeedSessionsError
	switch {
	case errors.As(err, &ns):
		return usageErr("add the same --sessions (or --layout) the migration used", "%v", err)
	case err != nil:
		return migrateError(err)
	}
	doc := rollbackDocument{envelope: g.envelope(rollbackSchema, rep.Outcome), RollbackReport: rep}
	if rep.Locked != nil {
		doc.Refused = lockedLine(rep.Locked)
	}
	if g.output != "text" {
		return errors.Join(g.document(doc), ended(rep.Outcome))
	}
	if !g.quiet || rep.Outcome != outcome.OK {
		printRollback(g, &doc)
	}
	if rep.Outcome == outcome.Interrupted && rep.Sessions != nil {
		g.interrupted(rep.Sessions.Changed, "session units restored")
	}
	return ended(rep.Outcome)
}

func printRollback(g *global, doc *rollbackDocument) {
	w, rep := g.stdout, doc.RollbackReport
	if doc.Refused != "" {
		fmt.Fprintf(w, "refused: %s\n", doc.Refused)
		return
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", printable(n))
	}
	for _, r := range rep.Restored {
		fmt.Fprintf(w, "put back %d sources (%s) from the trash\n", r.Restored, humanize.IBytes(uint64(r.Bytes)))
	}
	if n := len(rep.FromCopies); n > 0 {
		fmt.Fprintf(w, "made %d sources again from their proven copies (their trash run was purged)\n", n)
	}
	for _, m := range rep.Missing {
		fmt.Fprintf(w, "missing: %s: %s\n", printable(m.Key), printable(m.Reason))
	}
	switch rr := rep.Sessions; {
	case len(rep.Missing) > 0:
		fmt.Fprintf(w, "refused: %d sources the sessions would point back at are gone; no session was changed\n", len(rep.Missing))
	case rr != nil:
		for _, n := range rr.ProblemList {
			fmt.Fprintf(w, "not restored: %s: %s\n", printable(n.Place.String()), printable(n.Reason))
		}
		fmt.Fprintf(w, "restored %d references in %d session units; %d not restored\n", rr.References, rr.Changed, rr.Problems)
	default:
		fmt.Fprintln(w, "no session was rewritten by this migration")
	}
	fmt.Fprintf(w, "the copies in %s are left in place\n", printable(rep.To))
}
