# A prompt rewritten at every prompt, starship / powerline style: PS1 is rebuilt from
# scratch (colours, last status, duration), and PS0 starts a timer.
__prompt() {
  local status=$? colour='\[\e[32m\]'
  (( status != 0 )) && colour='\[\e[31m\]'
  local took=''
  if [[ -n ${__started-} ]]; then took=" $(( SECONDS - __started ))s"; fi
  PS1="\[\e[1;34m\]\w\[\e[0m\]${took} ${colour}❯\[\e[0m\] "
  unset __started
  return $status
}
PS0='${__started:=${SECONDS}}${__started:0:0}'
PROMPT_COMMAND="__prompt;${PROMPT_COMMAND:+$PROMPT_COMMAND}"
