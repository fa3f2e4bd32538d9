# interactive-terminal-mcp prompt integration for POSIX shells without hooks (dash, ash),
# read through $ENV. No hook runs before a command, so the prompt carries the sequences:
# D (the last exit status), P (cwd), A and B around the prompt, each ending with this
# terminal's nonce. The server marks a line typed at the prompt as executed when the shell
# echoes it.
if [ -n "${PM_TERM_NONCE_FILE:-}" ] && [ -r "$PM_TERM_NONCE_FILE" ]; then
  IFS= read -r __pmt_nonce < "$PM_TERM_NONCE_FILE"
  command rm -f -- "$PM_TERM_NONCE_FILE" 2>/dev/null
fi
unset PM_TERM_NONCE_FILE
if [ -n "${PM_TERM_USER_ENV:-}" ]; then
  ENV=$PM_TERM_USER_ENV
  if [ -z "${PM_TERM_NO_USER_RC:-}" ] && [ -r "$PM_TERM_USER_ENV" ]; then
    . "$PM_TERM_USER_ENV"
  fi
else
  unset ENV
fi
unset PM_TERM_USER_ENV PM_TERM_NO_USER_RC
# The user's rc has run: until this mark, a still screen may be a question it asks.
if [ -n "${__pmt_nonce:-}" ]; then
  printf '\033]633;P;PmRc=done;%s\007' "$__pmt_nonce"
fi
if [ -n "${__pmt_nonce:-}" ]; then
  __pmt_e=$(printf '\033')
  __pmt_g=$(printf '\007')
  PS1="${__pmt_e}]633;D;\$?;${__pmt_nonce}${__pmt_g}${__pmt_e}]633;P;Cwd=\${PWD};${__pmt_nonce}${__pmt_g}${__pmt_e}]633;A;${__pmt_nonce}${__pmt_g}${PS1:-\$ }${__pmt_e}]633;B;${__pmt_nonce}${__pmt_g}"
  # The continuation prompt's end: PS2 shows while a command line is still open.
  PS2="${PS2-> }${__pmt_e}]633;G;${__pmt_nonce}${__pmt_g}"
  unset __pmt_e __pmt_g __pmt_nonce
fi
