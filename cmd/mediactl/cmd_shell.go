package main

// Shell conventions: the help, completion and man commands (the usage-error
// and suggestion pass over the command tree is in conventions.go).

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// shellCommands are the commands about mediactl itself rather than a store.
func shellCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "help",
			Usage:     "show the help of mediactl, a command or a subcommand",
			ArgsUsage: "[COMMAND [SUBCOMMAND]]",
			Action:    runHelp,
			// 'mediactl help gc <TAB>' offers gc's subcommands.
			BashComplete: func(c *cli.Context) {
				cmds := c.App.Commands
				for _, name := range c.Args().Slice() {
					var next []*cli.Command
					for _, cmd := range cmds {
						if cmd.HasName(name) {
							next = cmd.Subcommands
						}
					}
					cmds = next
				}
				for _, cmd := range cmds {
					if !cmd.Hidden && cmd.Name != "help" {
						fmt.Fprintln(c.App.Writer, cmd.Name)
					}
				}
			},
		},
		{
			Name:      "completion",
			Usage:     "print a shell completion script: bash, zsh, fish or powershell",
			ArgsUsage: "bash|zsh|fish|powershell",
			Description: `Load it in the running shell, or install it where the shell looks:

   source <(mediactl completion bash)     # bash; or save it in /etc/bash_completion.d/mediactl
   mediactl completion zsh > "${fpath[1]}/_mediactl"
   mediactl completion fish > ~/.config/fish/completions/mediactl.fish
   mediactl completion powershell | Out-String | Invoke-Expression   # PowerShell; or in $PROFILE`,
			Action: runCompletion,
			BashComplete: func(c *cli.Context) {
				for _, s := range completionShells {
					fmt.Fprintln(c.App.Writer, s)
				}
			},
		},
		{
			Name:   "man",
			Usage:  "print the man page (section 1), made from the same definitions as --help",
			Action: runMan,
		},
	}
}

// completionShells are the shells 'mediactl completion' writes a script for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// runHelp prints the help of the command path given, or of mediactl.
func runHelp(c *cli.Context) error {
	path := c.Args().Slice()
	cmds := c.App.Commands
	for i, name := range path {
		var found *cli.Command
		for _, cmd := range cmds {
			if !cmd.Hidden && cmd.HasName(name) {
				found = cmd
			}
		}
		if found == nil {
			parent := strings.Join(append([]string{c.App.Name}, path[:i]...), " ")
			return unknownCommand(parent, name, cmds)
		}
		cmds = found.Subcommands
	}
	if len(path) == 0 {
		return cli.ShowAppHelp(c)
	}
	// The path is known: print its help as 'mediactl PATH --help' does, so
	// that both show the same text.
	return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, path...), "--help"))
}

// unknownCommand is the usage error for a command name that parent lacks, with
// a suggestion when one is close.
func unknownCommand(parent, name string, cmds []*cli.Command) error {
	var names []string
	for _, cmd := range cmds {
		if !cmd.Hidden && cmd.Name != "help" {
			names = append(names, cmd.Name)
		}
	}
	word, where := "command", ""
	if strings.Contains(parent, " ") {
		word, where = "subcommand", fmt.Sprintf(" of '%s'", parent)
	}
	hint := fmt.Sprintf("the %ss are %s; see '%s --help'", word, orList(names), parent)
	if s := suggest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean '%s %s'? see '%s --help'", parent, s, parent)
	}
	return usageErr(hint, "no %s %q%s", word, name, where)
}

// orList joins names as "a, b and c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func runCompletion(c *cli.Context) error {
	hint := "write it as: mediactl completion bash, zsh, fish or powershell"
	if c.NArg() != 1 {
		return usageErr(hint, "completion takes one shell, %d arguments given", c.NArg())
	}
	var script string
	switch shell := c.Args().First(); shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
	case "powershell":
		script = powershellCompletion
	case "fish":
		s, err := c.App.ToFishCompletion()
		if err != nil {
			return fmt.Errorf("making the fish completion: %w", err)
		}
		script = withoutRepeats(s)
	default:
		if s := suggest(shell, completionShells); s != "" {
			hint = fmt.Sprintf("did you mean %s? %s", s, hint)
		}
		return usageErr(hint, "no completion for shell %q", shell)
	}
	_, err := fmt.Fprint(c.App.Writer, script)
	return err
}

// withoutRepeats drops a completion line given before: urfave/cli's fish
// script completes --help and --version both from the flags and on its own.
func withoutRepeats(s string) string {
	lines := strings.Split(s, "\n")
	seen := map[string]bool{}
	out := lines[:0]
	for _, l := range lines {
		if strings.HasPrefix(l, "complete ") {
			if seen[l] {
				continue
			}
			seen[l] = true
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
