# interactive-terminal-mcp shell integration for zsh: OSC 633 sequences, each ending with this
# terminal's nonce. The user's own .zshrc runs first, with ZDOTDIR restored to theirs.
#
# Built to survive real set-ups (docs/terminal-core.md, "Shell integration in real set-ups"):
# zsh's own hook arrays carry everything (frameworks add to them, never replace them); our
# precmd hooks stay first (exit status) and last (prompt marks, after any theme rewrote
# PROMPT); every function runs under `emulate -L zsh`, so the user's options (KSH_ARRAYS,
# SH_WORD_SPLIT, NO_UNSET, ERR_EXIT, ...) do not change what it does.
ZDOTDIR=${PM_TERM_USER_ZDOTDIR:-$HOME}
unset PM_TERM_USER_ZDOTDIR
# Started by a user's ~/.bashrc (`exec zsh`) in one of our bash terminals: our directories
# leave the environment its programs inherit.
if [[ -n ${PM_TERM_FISH_DATA:-} ]]; then
  if [[ ${XDG_DATA_DIRS:-} == "$PM_TERM_FISH_DATA:/usr/local/share:/usr/share" ]]; then
    unset XDG_DATA_DIRS
  else
    XDG_DATA_DIRS=${XDG_DATA_DIRS#"$PM_TERM_FISH_DATA:"}
  fi
fi
unset PM_TERM_FISH_DATA PM_TERM_FISH_INTEGRATION PM_TERM_ZDOTDIR

if [[ -n ${PM_TERM_NONCE_FILE:-} && -r $PM_TERM_NONCE_FILE ]]; then
  __pmt_nonce=$(<$PM_TERM_NONCE_FILE)
  command rm -f -- $PM_TERM_NONCE_FILE 2>/dev/null
fi
unset PM_TERM_NONCE_FILE

if [[ -z ${PM_TERM_NO_USER_RC:-} && -f $ZDOTDIR/.zshrc ]]; then
  builtin source $ZDOTDIR/.zshrc
fi
unset PM_TERM_NO_USER_RC
# The user's rc has run: until this mark, a still screen may be a question it asks.
if [[ -n ${__pmt_nonce:-} ]]; then
  builtin printf '\e]633;P;PmRc=done;%s\a' $__pmt_nonce
fi

if [[ -n ${__pmt_nonce:-} ]]; then
  __pmt_esc() {
    emulate -L zsh
    local s=$1
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    s=${s//$'\n'/\\x0a}
    s=${s//$'\r'/\\x0d}
    s=${s//$'\e'/\\x1b}
    s=${s//$'\a'/\\x07}
    REPLY=$s
  }
  typeset -g __pmt_in_command=0
  typeset -g __pmt_b_raw=$'\e]633;B;'"${__pmt_nonce}"$'\a'
  # The continuation prompt's end: PS2 shows while a command line is still open.
  typeset -g __pmt_g_raw=$'\e]633;G;'"${__pmt_nonce}"$'\a'

  # First precmd hook: the finished command's exit status, before anything changes $?.
  # Hooks added after ours since the last prompt are moved before our last one.
  __pmt_precmd_first() {
    local ec=$?
    emulate -L zsh
    if (( __pmt_in_command )); then
      builtin printf '\e]633;D;%s;%s\a' $ec $__pmt_nonce
      __pmt_in_command=0
    fi
    if [[ ${precmd_functions[1]} != __pmt_precmd_first || ${precmd_functions[-1]} != __pmt_precmd_last ]]; then
      precmd_functions=(__pmt_precmd_first ${precmd_functions:#__pmt_precmd_(first|last)} __pmt_precmd_last)
    fi
    if [[ ${preexec_functions[-1]} != __pmt_preexec ]]; then
      preexec_functions=(${preexec_functions:#__pmt_preexec} __pmt_preexec)
    fi
    return ec
  }
  # Last precmd hook: cwd, prompt start, and the prompt-end mark at the end of PS1.
  __pmt_precmd_last() {
    local ec=$?
    emulate -L zsh
    __pmt_esc "$PWD"
    builtin printf '\e]633;P;Cwd=%s;%s\a\e]633;A;%s\a' "$REPLY" $__pmt_nonce $__pmt_nonce
    # The mark carries the nonce: PS1 stays out of programs' environments.
    [[ ${(t)PS1} == *export* ]] && typeset +x PS1
    # %{ %} tells the line editor the mark takes no room; only with PROMPT_PERCENT.
    local mark=$__pmt_b_raw
    [[ -o promptpercent ]] && mark="%{${__pmt_b_raw}%}"
    PS1=${PS1//"%{${__pmt_b_raw}%}"/}
    PS1=${PS1//"${__pmt_b_raw}"/}$mark
    [[ ${(t)PS2} == *export* ]] && typeset +x PS2
    mark=$__pmt_g_raw
    [[ -o promptpercent ]] && mark="%{${__pmt_g_raw}%}"
    PS2=${PS2//"%{${__pmt_g_raw}%}"/}
    PS2=${PS2//"${__pmt_g_raw}"/}$mark
    return ec
  }
  # Last preexec hook: the command line as typed (zsh passes it whatever history keeps).
  __pmt_preexec() {
    emulate -L zsh
    __pmt_in_command=1
    __pmt_esc "$1"
    builtin printf '\e]633;E;%s;%s\a\e]633;C;%s\a' "$REPLY" $__pmt_nonce $__pmt_nonce
  }
  # zsh marks a partial last line with an inverse % or # before each prompt; that mark
  # would end up in every command's output, so it is left blank (the new line stays).
  PROMPT_EOL_MARK=''
  typeset -ga precmd_functions preexec_functions
  precmd_functions=(__pmt_precmd_first "${precmd_functions[@]}" __pmt_precmd_last)
  preexec_functions=("${preexec_functions[@]}" __pmt_preexec)
fi
