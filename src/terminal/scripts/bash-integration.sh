# interactive-terminal-mcp shell integration for bash: OSC 633 sequences, each ending with
# this terminal's nonce, so output that merely prints such a sequence is never trusted.
# Loaded with `bash --init-file`; the user's own ~/.bashrc is sourced first, as bash would.
#
# Built to survive real set-ups (docs/terminal-core.md, "Shell integration in real set-ups"):
#   D     exit status, first in PROMPT_COMMAND at every prompt (the server ignores it when no
#         command ran); $? is handed on unchanged to the user's own prompt commands.
#   P, A  cwd and prompt start, last in PROMPT_COMMAND.
#   B     prompt end, put back at the end of PS1 at every prompt (themes rewrite PS1).
#   G     continuation prompt end, kept at the end of PS2 the same way: bash shows PS2 while
#         a command line is still open (a quote, a here-document, a block) and reads on.
#   C     command executed: static text at the end of PS0, which bash prints after reading a
#         command line and before running it: never for an empty line, whatever the form
#         of the command, and whatever the user's DEBUG trap does.
#   E     the command line, from history, in the DEBUG trap's first call after PS0; left
#         out when the history cannot be trusted (HISTCONTROL=ignorespace, HISTIGNORE,
#         HISTSIZE=0, history off), so a line is never reported as another one.
# The user's PROMPT_COMMAND (string or array), DEBUG trap, PS0 and PS1 are kept; our
# functions run with `set +eu` made local to them (`local -`), so nothing here prints, fails
# under `set -u`, or returns a failure that `set -e` would act on.

if [ -n "${PM_TERM_NONCE_FILE:-}" ] && [ -r "$PM_TERM_NONCE_FILE" ]; then
  __pmt_nonce=$(<"$PM_TERM_NONCE_FILE")
fi

if [ -z "${PM_TERM_NO_USER_RC:-}" ] && [ -f ~/.bashrc ]; then
  # A ~/.bashrc may end in `exec zsh` or `exec fish` (where the login shell cannot be
  # changed). While it runs, the shell it starts finds our integration — zsh through
  # ZDOTDIR, fish through XDG_DATA_DIRS — and the nonce file is still there to read; both
  # take our directories back out of what their programs inherit. A .bashrc that returns
  # gets the variables back as they were, unless it set them itself.
  __pmt_dir=${BASH_SOURCE[0]%/*}
  __pmt_zdotdir_was=${ZDOTDIR-} __pmt_zdotdir_set=${ZDOTDIR+1}
  __pmt_xdg_was=${XDG_DATA_DIRS-} __pmt_xdg_set=${XDG_DATA_DIRS+1}
  [ -n "$__pmt_zdotdir_set" ] && export PM_TERM_USER_ZDOTDIR=$ZDOTDIR
  export PM_TERM_ZDOTDIR=$__pmt_dir/zsh PM_TERM_FISH_DATA=$__pmt_dir/fish-data
  export PM_TERM_FISH_INTEGRATION=$__pmt_dir/fish-integration.fish
  export ZDOTDIR=$PM_TERM_ZDOTDIR
  export XDG_DATA_DIRS=$PM_TERM_FISH_DATA:${XDG_DATA_DIRS:-/usr/local/share:/usr/share}
  . ~/.bashrc
  if [ "${ZDOTDIR-}" = "$PM_TERM_ZDOTDIR" ]; then
    if [ -n "$__pmt_zdotdir_set" ]; then ZDOTDIR=$__pmt_zdotdir_was; else unset ZDOTDIR; fi
  fi
  case ${XDG_DATA_DIRS-} in
    "$PM_TERM_FISH_DATA:"*)
      if [ -n "$__pmt_xdg_set" ]; then
        XDG_DATA_DIRS=${XDG_DATA_DIRS#"$PM_TERM_FISH_DATA:"}
      elif [ "$XDG_DATA_DIRS" = "$PM_TERM_FISH_DATA:/usr/local/share:/usr/share" ]; then
        unset XDG_DATA_DIRS
      fi
      ;;
  esac
  unset PM_TERM_USER_ZDOTDIR PM_TERM_ZDOTDIR PM_TERM_FISH_DATA PM_TERM_FISH_INTEGRATION
  unset __pmt_dir __pmt_zdotdir_was __pmt_zdotdir_set __pmt_xdg_was __pmt_xdg_set
fi
unset PM_TERM_NO_USER_RC
if [ -n "${PM_TERM_NONCE_FILE:-}" ]; then
  command rm -f -- "$PM_TERM_NONCE_FILE" 2>/dev/null
fi
unset PM_TERM_NONCE_FILE
# The user's rc has run: until this mark, a still screen may be a question it asks.
if [ -n "${__pmt_nonce:-}" ]; then
  builtin printf '\e]633;P;PmRc=done;%s\a' "$__pmt_nonce"
fi

if [ -n "${__pmt_nonce:-}" ]; then
  # The installation itself runs without the user's `set -e` / `set -u` (restored below).
  __pmt_opts=$-
  set +eu
  # Escape backslash, semicolon and control characters for an OSC parameter.
  __pmt_esc() {
    local s=${1-}
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    s=${s//$'\n'/\\x0a}
    s=${s//$'\r'/\\x0d}
    s=${s//$'\e'/\\x1b}
    s=${s//$'\a'/\\x07}
    __pmt_r=$s
  }
  __pmt_b="\[\e]633;B;${__pmt_nonce}\a\]"
  # The continuation prompt's end: PS2 shows while a command line is still open.
  __pmt_ps2_mark="\[\e]633;G;${__pmt_nonce}\a\]"
  # PS0's tail: raises the flag (an arithmetic side effect that prints nothing), then C.
  __pmt_ps0_tail='${__pmt_nonce:$((__pmt_ran=1)):0}'$'\e]633;C;'"${__pmt_nonce}"$'\a'
  # Without promptvars PS0 is not expanded: C alone, as literal text.
  __pmt_ps0_plain=$'\e]633;C;'"${__pmt_nonce}"$'\a'
  __pmt_ran=0
  __pmt_hist_last=
  __pmt_hist_seen=0

  # The marks carry the nonce: the variables holding them stay in this shell, never in a
  # program's environment (old dotfiles export PS1; a nested bash would print our marks).
  __pmt_unexport() {
    local v
    for v in PS1 PS0 PS2 PROMPT_COMMAND; do
      case ${!v@a} in
        *r*) ;;
        *x*) builtin export -n "$v" ;;
      esac
    done
  }

  # Hand a status (and `$_`) on to whatever runs next.
  __pmt_status() { return "${1:-0}"; }

  # First in PROMPT_COMMAND: the finished command's exit status, before anything changes $?.
  __pmt_precmd_first() {
    local ec=$? opts=$-
    local -
    set +eu
    __pmt_ran=0
    builtin printf '\e]633;D;%s;%s\a' "$ec" "$__pmt_nonce"
    # Under `set -e` a failing return here would end the shell.
    case $opts in *e*) return 0 ;; esac
    return "$ec"
  }

  # Last in PROMPT_COMMAND: cwd, prompt start, and the marks kept in PS1 and PS0.
  __pmt_precmd_last() {
    local ec=$? opts=$-
    local -
    set +eu
    __pmt_esc "$PWD"
    builtin printf '\e]633;P;Cwd=%s;%s\a\e]633;A;%s\a' "$__pmt_r" "$__pmt_nonce" "$__pmt_nonce"
    __pmt_unexport
    # Themes rebuild PS1 (and PS0): the marks go back at the end, once.
    if [[ ${PS1@a} != *r* ]]; then
      case ${PS1-} in
        *"$__pmt_b") ;;
        *) PS1=${PS1-}
           PS1=${PS1//"$__pmt_b"/}$__pmt_b ;;
      esac
    fi
    if [[ ${PS2@a} != *r* ]]; then
      case ${PS2-} in
        *"$__pmt_ps2_mark") ;;
        *) PS2=${PS2-> }
           PS2=${PS2//"$__pmt_ps2_mark"/}$__pmt_ps2_mark ;;
      esac
    fi
    local tail=$__pmt_ps0_tail other=$__pmt_ps0_plain
    if ! builtin shopt -q promptvars; then
      tail=$__pmt_ps0_plain other=$__pmt_ps0_tail
    fi
    if [[ ${PS0@a} != *r* ]]; then
      case ${PS0-} in
        *"$tail") ;;
        *) PS0=${PS0-}
           PS0=${PS0//"$other"/}$tail ;;
      esac
    fi
    case $opts in *e*) return 0 ;; esac
    return "$ec"
  }

  # Whether `history 1` is the line just read. History may leave a line out (a leading
  # space with ignorespace, a HISTIGNORE pattern, HISTSIZE=0, history off); then the last
  # entry is an older line, and is only trusted when it changed since the last command.
  __pmt_command_line() {
    __pmt_r=
    [[ -o history ]] || return 0
    local h
    h=$(HISTTIMEFORMAT='' builtin history 1 2>/dev/null) || return 0
    if [[ $h =~ ^[[:space:]]*[0-9]+[*]?[[:space:]]+(.*)$ ]]; then
      h=${BASH_REMATCH[1]}
    else
      h=
    fi
    if [[ $__pmt_hist_seen == 1 && $h == "$__pmt_hist_last" ]]; then
      # Unchanged: a repeat that ignoredups kept out (the same text), or a line history
      # left out (another text). Only the first is possible without ignoring settings.
      case ":${HISTCONTROL-}:" in
        *:ignorespace:* | *:ignoreboth:*) h= ;;
      esac
      [[ -n ${HISTIGNORE-} ]] && h=
    fi
    [[ ${HISTSIZE-1} == 0 ]] && h=
    __pmt_hist_last=$h
    __pmt_hist_seen=1
    __pmt_r=$h
  }

  # The DEBUG trap: its first call after PS0 raised the flag is the command line's first
  # command. A trap that was already set runs after ours, with its own $? and $_.
  __pmt_debug() {
    local ec=$? last=${1-}
    if [[ $__pmt_ran == 1 ]]; then
      local -
      set +eu
      __pmt_ran=2
      case $BASH_COMMAND in
        __pmt_precmd_first*) ;;
        *)
          __pmt_command_line
          __pmt_esc "$__pmt_r"
          builtin printf '\e]633;E;%s;%s\a' "$__pmt_r" "$__pmt_nonce"
          ;;
      esac
    fi
    if [[ -n $__pmt_prior_debug ]]; then
      __pmt_status "$ec" "$last"
      eval "$__pmt_prior_debug"
      return
    fi
    return 0
  }

  # The trap the user's set-up installed, if any (as `trap -p` quotes it).
  __pmt_prior_debug=
  __pmt_t=$(builtin trap -p DEBUG)
  if [[ -n $__pmt_t ]]; then
    eval "__pmt_t=(${__pmt_t})"
    __pmt_prior_debug=${__pmt_t[2]-}
  fi
  unset __pmt_t

  # What works here, told to the server: a read-only PROMPT_COMMAND (no exit status, no
  # prompt start) or PS0 (no command start) leaves only part of it.
  __pmt_level=full
  [[ ${PS0@a} == *r* ]] && __pmt_level=prompt_only
  # PROMPT_COMMAND: an array keeps its elements; a string gets our lines around it, joined by
  # newlines (a trailing `;`, newline or comment in it stays harmless). A string that does not
  # parse on its own would take our lines down with it: it becomes one element of an array.
  if [[ ${PROMPT_COMMAND@a} == *r* ]]; then
    __pmt_level=prompt_only
  elif [[ ${PROMPT_COMMAND@a} == *a* ]]; then
    PROMPT_COMMAND=(__pmt_precmd_first "${PROMPT_COMMAND[@]}" __pmt_precmd_last)
  elif [[ -z ${PROMPT_COMMAND-} ]]; then
    PROMPT_COMMAND=$'__pmt_precmd_first\n__pmt_precmd_last'
  elif [[ -n ${__bp_install_string-} && $PROMPT_COMMAND == *"$__bp_install_string"* ]]; then
    # bash-preexec (atuin, starship, iTerm2 ship it) installs itself from the end of
    # PROMPT_COMMAND at the first prompt and then arms its preexec hooks; any command after
    # its installer runs the DEBUG trap and disarms them, so the first command line would
    # run no preexec hook of the user's and report no `E`. Our last line goes before the
    # installer; once installed, bash-preexec keeps it, in order, before its own last line.
    # The replacement is a quoted variable: taken literally whatever the shell options
    # (`patsub_replacement` would read a `&` in it as the match).
    __pmt_t=$'__pmt_precmd_last\n'$__bp_install_string
    PROMPT_COMMAND=$'__pmt_precmd_first\n'"${PROMPT_COMMAND//"$__bp_install_string"/"$__pmt_t"}"
    unset __pmt_t
  elif eval "__pmt_pc_check() {
${PROMPT_COMMAND}
}" 2>/dev/null || ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
    PROMPT_COMMAND=$'__pmt_precmd_first\n'"${PROMPT_COMMAND}"$'\n__pmt_precmd_last'
  else
    PROMPT_COMMAND=(__pmt_precmd_first "${PROMPT_COMMAND}" __pmt_precmd_last)
  fi
  unset -f __pmt_pc_check
  __pmt_unexport
  __pmt_command_line
  trap '__pmt_debug "$_"' DEBUG
  [[ ${PS1@a} == *r* ]] || PS1=${PS1-}$__pmt_b
  builtin printf '\e]633;P;PmIntegration=%s;%s\a' "$__pmt_level" "$__pmt_nonce"
  unset __pmt_level
  case $__pmt_opts in *e*) set -e ;; esac
  case $__pmt_opts in *u*) set -u ;; esac
  unset __pmt_opts
fi
