# Reproduction of bash-preexec 0.5 (rcaloras/bash-preexec), the hook framework behind
# starship, atuin and iTerm2's bash integration: at source time it appends its installer
# to PROMPT_COMMAND; at the first prompt the installer takes over the DEBUG trap (keeping
# the old one as a preexec function), rewrites PROMPT_COMMAND around the existing one,
# drops `ignorespace` from HISTCONTROL, and runs preexec_functions / precmd_functions.
__bp_imported="${bash_preexec_imported:=defined}"
__bp_last_ret_value="$?"
BP_PIPESTATUS=("${PIPESTATUS[@]}")
__bp_last_argument_prev_command="$_"
__bp_inside_precmd=0
__bp_inside_preexec=0
__bp_install_string=$'__bp_trap_string="$(trap -p DEBUG)"\ntrap - DEBUG\n__bp_install'
__bp_require_not_readonly() {
  local var
  for var; do
    if ! ( unset "$var" 2> /dev/null ); then
      echo "bash-preexec requires write access to ${var}" >&2
      return 1
    fi
  done
}
__bp_adjust_histcontrol() {
  local histcontrol
  histcontrol="${HISTCONTROL:-}"
  histcontrol="${histcontrol//ignorespace}"
  if [[ "$histcontrol" == *"ignoreboth"* ]]; then
    histcontrol="ignoredups:${histcontrol//ignoreboth}"
  fi
  export HISTCONTROL="$histcontrol"
}
__bp_interactive_mode() { __bp_preexec_interactive_mode="on"; }
__bp_trim_whitespace() {
  local var=${1:?} text=${2:-}
  text="${text#"${text%%[![:space:]]*}"}"
  text="${text%"${text##*[![:space:]]}"}"
  printf -v "$var" '%s' "$text"
}
__bp_sanitize_string() {
  local var=${1:?} text=${2:-} sanitized
  __bp_trim_whitespace sanitized "$text"
  sanitized=${sanitized%;}
  sanitized=${sanitized#;}
  __bp_trim_whitespace sanitized "$sanitized"
  printf -v "$var" '%s' "$sanitized"
}
__bp_precmd_invoke_cmd() {
  __bp_last_ret_value="$?" BP_PIPESTATUS=("${PIPESTATUS[@]}")
  if (( __bp_inside_precmd > 0 )); then
    return
  fi
  local __bp_inside_precmd=1
  local precmd_function
  for precmd_function in "${precmd_functions[@]}"; do
    if type -t "$precmd_function" 1>/dev/null; then
      __bp_set_ret_value "$__bp_last_ret_value" "$__bp_last_argument_prev_command"
      "$precmd_function"
    fi
  done
  __bp_set_ret_value "$__bp_last_ret_value"
}
__bp_set_ret_value() { return ${1:+"$1"}; }
__bp_in_prompt_command() {
  local prompt_command_array IFS=$'\n;'
  read -rd '' -a prompt_command_array <<< "${PROMPT_COMMAND[*]:-}"
  local trimmed_arg
  __bp_trim_whitespace trimmed_arg "${1:-}"
  local command trimmed_command
  for command in "${prompt_command_array[@]:-}"; do
    __bp_trim_whitespace trimmed_command "$command"
    if [[ "$trimmed_command" == "$trimmed_arg" ]]; then
      return 0
    fi
  done
  return 1
}
__bp_preexec_invoke_exec() {
  __bp_last_argument_prev_command="${1:-}"
  if (( __bp_inside_preexec > 0 )); then
    return
  fi
  local __bp_inside_preexec=1
  if [[ ! -t 1 && -z "${__bp_delay_install:-}" ]]; then
    return
  fi
  if [[ -n "${COMP_LINE:-}" ]]; then
    return
  fi
  if [[ -z "${__bp_preexec_interactive_mode:-}" ]]; then
    return
  else
    if [[ 0 -eq "${BASH_SUBSHELL:-}" ]]; then
      __bp_preexec_interactive_mode=""
    fi
  fi
  if __bp_in_prompt_command "${BASH_COMMAND:-}"; then
    __bp_preexec_interactive_mode=""
    return
  fi
  local this_command
  this_command=$(
    export LC_ALL=C
    HISTTIMEFORMAT='' builtin history 1 | sed '1 s/^ *[0-9][0-9]*[* ] //'
  )
  if [[ -z "$this_command" ]]; then
    return
  fi
  local preexec_function
  local preexec_function_ret_value
  local preexec_ret_value=0
  for preexec_function in "${preexec_functions[@]:-}"; do
    if type -t "$preexec_function" 1>/dev/null; then
      __bp_set_ret_value ${__bp_last_ret_value:-}
      "$preexec_function" "$this_command"
      preexec_function_ret_value="$?"
      if [[ "$preexec_function_ret_value" != 0 ]]; then
        preexec_ret_value="$preexec_function_ret_value"
      fi
    fi
  done
  __bp_set_ret_value "$preexec_ret_value" "$__bp_last_argument_prev_command"
}
__bp_install() {
  if [[ "${PROMPT_COMMAND[*]:-}" == *"__bp_precmd_invoke_cmd"* ]]; then
    return 1;
  fi
  trap '__bp_preexec_invoke_exec "$_"' DEBUG
  eval "local trap_argv=(${__bp_trap_string:-})"
  local prior_trap=${trap_argv[2]:-}
  unset __bp_trap_string
  if [[ -n "$prior_trap" ]]; then
    eval '__bp_original_debug_trap() {
      '"$prior_trap"'
    }'
    preexec_functions+=(__bp_original_debug_trap)
  fi
  __bp_adjust_histcontrol
  if [[ -n "${bash_preexec_set_errtrace:-}" ]]; then set -o errtrace; fi
  local existing_prompt_command
  existing_prompt_command="${PROMPT_COMMAND:-}"
  existing_prompt_command="${existing_prompt_command//$__bp_install_string[;$'\n']}"
  existing_prompt_command="${existing_prompt_command//$__bp_install_string}"
  __bp_sanitize_string existing_prompt_command "$existing_prompt_command"
  if [[ "${existing_prompt_command:-:}" == ":" ]]; then
    existing_prompt_command=
  fi
  PROMPT_COMMAND='__bp_precmd_invoke_cmd'
  PROMPT_COMMAND+=${existing_prompt_command:+$'\n'$existing_prompt_command}
  PROMPT_COMMAND+=$'\n__bp_interactive_mode'
  precmd_functions+=(precmd)
  preexec_functions+=(preexec)
  __bp_precmd_invoke_cmd
  __bp_interactive_mode
}
__bp_install_after_session_init() {
  __bp_require_not_readonly PROMPT_COMMAND HISTCONTROL HISTTIMEFORMAT || return
  local sanitized_prompt_command
  __bp_sanitize_string sanitized_prompt_command "${PROMPT_COMMAND:-}"
  if [[ -n "$sanitized_prompt_command" ]]; then
    PROMPT_COMMAND=${sanitized_prompt_command}$'\n'
  fi
  PROMPT_COMMAND+=${__bp_install_string}
}
__bp_install_after_session_init

# The user's hooks, as starship or a "command timer" would add them.
__timer_start() { __timer=$SECONDS; }
__timer_show() { __elapsed=$(( SECONDS - ${__timer:-$SECONDS} )); }
preexec_functions+=(__timer_start)
precmd_functions+=(__timer_show)
