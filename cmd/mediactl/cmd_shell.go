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
			Usage:     "print a shell completion script: bash, zsh or fish",
			ArgsUsage: "bash|zsh|fish",
			Description: `Load it in the running shell, or install it where the shell looks:

   source <(mediactl completion bash)     # bash; or save it in /etc/bash_completion.d/mediactl
   mediactl completion zsh > "${fpath[1]}/_mediactl"
   mediactl completion fish > ~/.config/fish/completions/mediactl.fish`,
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
var completionShells = []string{"bash", "zsh", "fish"}

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
	hint := "write it as: mediactl completion bash, zsh or fish"
	if c.NArg() != 1 {
		return usageErr(hint, "completion takes one shell, %d arguments given", c.NArg())
	}
	var script string
	switch shell := c.Args().First(); shell {
	case "bash":
		script = bashCompletion
	case "zsh":
		script = zshCompletion
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

func runMan(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("write it as: mediactl man", "unexpected argument %q", c.Args().First())
	}
	// The page is made from markdown: the description's <words> and indented
	// examples must read there as they do in --help.
	c.App.Description = manMarkdown(c.App.Description)
	// urfave/cli's page shows a command's usage line but not its
	// description: append the description there, without the exit code
	// table, which the page has once.
	var describe func(cmds []*cli.Command)
	describe = func(cmds []*cli.Command) {
		for _, cmd := range cmds {
			desc := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cmd.Description), exitCodesHelp))
			if desc != "" {
				cmd.Usage += "\n\n" + manMarkdown(desc)
			}
			describe(cmd.Subcommands)
		}
	}
	describe(c.App.Commands)
	page, err := c.App.ToManWithSection(1)
	if err != nil {
		return fmt.Errorf("making the man page: %w", err)
	}
	_, err = fmt.Fprint(c.App.Writer, roffASCII(page))
	return err
}

// roffASCII writes each non-ASCII character (the help's dashes and ellipses)
// as a roff escape: troff without a preprocessor reads bytes, not UTF-8.
func roffASCII(page string) string {
	var b strings.Builder
	for _, r := range page {
		if r < 0x80 {
			b.WriteRune(r)
			continue
		}
		fmt.Fprintf(&b, `\[u%04X]`, r)
	}
	return b.String()
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

// manMarkdown is help text written for a terminal, as markdown that renders
// the same: indented lines become code blocks (a blank line before each), and
// angle brackets elsewhere are escaped rather than read as HTML.
func manMarkdown(text string) string {
	var b strings.Builder
	prevIndented, prevBlank := false, true
	for _, l := range strings.Split(text, "\n") {
		indented := strings.HasPrefix(l, "   ") && strings.TrimSpace(l) != ""
		switch {
		case indented && !prevIndented && !prevBlank:
			b.WriteString("\n    " + l + "\n")
		case indented:
			b.WriteString("    " + l + "\n")
		case prevIndented && strings.TrimSpace(l) != "":
			b.WriteString("\n" + escapeMarkdown(l) + "\n")
		default:
			b.WriteString(escapeMarkdown(l) + "\n")
		}
		prevIndented, prevBlank = indented, strings.TrimSpace(l) == ""
	}
	return strings.TrimSuffix(b.String(), "\n")
}

var markdownEscaper = strings.NewReplacer("<", "\\<", ">", "\\>", "*", "\\*")

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// The completion scripts ask mediactl itself for the candidates: urfave/cli
// answers a command line ending in --generate-bash-completion with the
// subcommands, or with the flags when the word being completed starts with a
// dash. The scripts only pass the words typed so far.

const bashCompletion = `# bash completion for mediactl; load with: source <(mediactl completion bash)
_mediactl_complete() {
  local cur="${COMP_WORDS[COMP_CWORD]}"
  local -a typed=("${COMP_WORDS[@]:0:COMP_CWORD}")
  local candidates
  if [[ "$cur" == -* ]]; then
    candidates=$("${typed[0]}" "${typed[@]:1}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    candidates=$("${typed[0]}" "${typed[@]:1}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=()
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
  # Nothing to offer (a flag's value, a RUN): complete file names.
  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _mediactl_complete mediactl
`

const zshCompletion = `#compdef mediactl
# zsh completion for mediactl; install as _mediactl in a directory of $fpath,
# or load with: source <(mediactl completion zsh)
_mediactl() {
  local cur=${words[CURRENT]}
  local -a typed candidates
  typed=("${(@)words[1,CURRENT-1]}")
  if [[ "$cur" == -* ]]; then
    candidates=("${(@f)$(${typed[@]} $cur --generate-bash-completion 2>/dev/null)}")
  else
    candidates=("${(@f)$(${typed[@]} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n "${candidates[1]}" ]]; then
    _describe 'mediactl' candidates
  else
    _files
  fi
}
if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _mediactl "$@"
else
  compdef _mediactl mediactl
fi
`
