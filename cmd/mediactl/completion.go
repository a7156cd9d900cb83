package main

// Completion scripts for bash, zsh and PowerShell (fish's is made by
// urfave/cli from the command definitions).

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

const powershellCompletion = `# PowerShell completion for mediactl; load with:
#   mediactl completion powershell | Out-String | Invoke-Expression
# or add that line to $PROFILE.
Register-ArgumentCompleter -Native -CommandName 'mediactl', 'mediactl.exe' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $typed = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    if ($wordToComplete -ne '' -and $typed.Count -gt 0) {
        $typed = $typed[0..($typed.Count - 2)]
    }
    if ($wordToComplete -like '-*') {
        $typed += $wordToComplete
    }
    $exe = $commandAst.CommandElements[0].ToString()
    & $exe @typed --generate-bash-completion 2>$null |
        Where-Object { $_ -like "$wordToComplete*" } |
        ForEach-Object { [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_) }
}
`
