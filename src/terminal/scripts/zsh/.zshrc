# interactive-terminal-mcp shell integration for zsh: OSC 633 sequences, each ending with this
# terminal's nonce. The user's own .zshrc runs first, with ZDOTDIR restored to theirs.
ZDOTDIR=${PM_TERM_USER_ZDOTDIR:-$HOME}
unset PM_TERM_USER_ZDOTDIR

if [[ -n ${PM_TERM_NONCE_FILE:-} && -r $PM_TERM_NONCE_FILE ]]; then
  __pmt_nonce=$(<$PM_TERM_NONCE_FILE)
  command rm -f -- $PM_TERM_NONCE_FILE
fi
unset PM_TERM_NONCE_FILE

if [[ -z ${PM_TERM_NO_USER_RC:-} && -f $ZDOTDIR/.zshrc ]]; then
  builtin source $ZDOTDIR/.zshrc
fi
unset PM_TERM_NO_USER_RC

if [[ -n ${__pmt_nonce:-} ]]; then
  __pmt_esc() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//;/\\x3b}
    s=${s//$'\n'/\\x0a}
    s=${s//$'\r'/\\x0d}
    s=${s//$'\e'/\\x1b}
    s=${s//$'\a'/\\x07}
    REPLY=$s
  }
  __pmt_in_command=0
  __pmt_b="%{$(builtin printf '\e]633;B;%s\a' $__pmt_nonce)%}"
  __pmt_precmd() {
    local ec=$?
    if (( __pmt_in_command )); then
      builtin printf '\e]633;D;%s;%s\a' $ec $__pmt_nonce
      __pmt_in_command=0
    fi
    __pmt_esc "$PWD"
    builtin printf '\e]633;P;Cwd=%s;%s\a\e]633;A;%s\a' "$REPLY" $__pmt_nonce $__pmt_nonce
    [[ $PS1 == *"$__pmt_b"* ]] || PS1="$PS1$__pmt_b"
    return $ec
  }
  __pmt_preexec() {
    __pmt_in_command=1
    __pmt_esc "$1"
    builtin printf '\e]633;E;%s;%s\a\e]633;C;%s\a' "$REPLY" $__pmt_nonce $__pmt_nonce
  }
  # zsh marks a partial last line with an inverse % or # before each prompt; that mark
  # would end up in every command's output, so it is left blank (the new line stays).
  PROMPT_EOL_MARK=''
  typeset -ga precmd_functions preexec_functions
  precmd_functions=(__pmt_precmd $precmd_functions)
  preexec_functions=($preexec_functions __pmt_preexec)
fi
