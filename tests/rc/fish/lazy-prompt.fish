# A prompt that replaces itself the first time it runs (lazy-loading themes do this), which
# also erases whatever wrapped it.
function fish_prompt
    functions -e fish_prompt
    function fish_prompt
        printf 'lazy %s> ' (prompt_pwd)
    end
    fish_prompt
end
