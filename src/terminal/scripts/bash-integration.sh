# interactive-terminal-mcp shell integration for bash: OSC 633 sequences, each ending with
# this terminal's nonce, so output that merely prints such a sequence is never trusted.
# Loaded with `bash --init-file`; the user's own ~/.bashrc is sourced first, as bash would.

if [ -n "${PM_TERM_NONCE_FILE:-}" ] && [ -r "$PM_TERM_NONCE_FILE" ]; then
  __pmt_nonce=$(<"$PM_TERM_NONCE_FILE")
  command rm -f -- "$PM_TERM_NONCE_FILE"
fi
unset PM_TERM_NONCE_FILE

if [ -z "${PM_TERM_NO_USER_RC:-}" ] && [ -f ~/.bashrc ]; then
  . ~/.bashrc
fi
unset PM_TERM_NO_USER_RC

if [ -n "${__pmt_nonce:-}" ]; then
  # Escape backslash, semicolon and control characters for an OSC parameter.
  __pmt_esc() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    s=${s//$'\n'/\\x0a}
    s=${s//$'\r'/\\x0d}
    s=${s//$'\e'/\\x1b}
    s=${s//$'\a'/\\x07}
    __pmt_r=$s
  }
  __pmt_in_command=0
  __pmt_at_prompt=0
  __pmt_b="\[\e]633;B;${__pmt_nonce}\a\]"

  # First in PROMPT_COMMAND: the finished command's exit code, before anything changes $?.
  __pmt_precmd_first() {
    local ec=$?
    if [ "$__pmt_in_command" = 1 ]; then
      builtin printf '\e]633;D;%s;%s\a' "$ec" "$__pmt_nonce"
      __pmt_in_command=0
    fi
    return $ec
  }
  # Last in PROMPT_COMMAND: cwd, prompt start, and the prompt-end marker kept in PS1.
  __pmt_precmd_last() {
    local ec=$?
    __pmt_esc "$PWD"
    builtin printf '\e]633;P;Cwd=%s;%s\a\e]633;A;%s\a' "$__pmt_r" "$__pmt_nonce" "$__pmt_nonce"
    case "$PS1" in
      *"$__pmt_b"*) ;;
      *) PS1="$PS1$__pmt_b" ;;
    esac
    __pmt_at_prompt=1
    return $ec
  }
  # DEBUG trap: the first command after a prompt is the user's command line.
  __pmt_preexec() {
    [ "$__pmt_at_prompt" = 1 ] || return 0
    [ -n "${COMP_LINE:-}" ] && return 0
    __pmt_at_prompt=0
    __pmt_in_command=1
    local line
    line=$(HISTTIMEFORMAT='' builtin history 1)
    if [[ $line =~ ^[[:space:]]*[0-9]+[*]?[[:space:]]+(.*)$ ]]; then
      line=${BASH_REMATCH[1]}
    fi
    __pmt_esc "$line"
    builtin printf '\e]633;E;%s;%s\a\e]633;C;%s\a' "$__pmt_r" "$__pmt_nonce" "$__pmt_nonce"
  }

  if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
    PROMPT_COMMAND=(__pmt_precmd_first "${PROMPT_COMMAND[@]}" __pmt_precmd_last)
  else
    PROMPT_COMMAND="__pmt_precmd_first${PROMPT_COMMAND:+; $PROMPT_COMMAND}; __pmt_precmd_last"
  fi
  PS1="$PS1$__pmt_b"
  trap '__pmt_preexec' DEBUG
fi
