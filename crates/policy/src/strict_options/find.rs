//! `find`'s words, admitted one by one (`strict_options`).

/// `find`'s words: its own grammar (tests, actions and operators are single-dash words, never
/// abbreviated), admitted word by word, with how many values each takes. Not admitted:
/// `-exec`, `-execdir`, `-ok`, `-okdir` (run programs), `-delete`, `-fprint`, `-fprint0`,
/// `-fprintf`, `-fls` (write files), `-D` (debug options) and `-O`.
const FIND_WORDS: &[(&str, usize)] = &[
    ("-H", 0),
    ("-L", 0),
    ("-P", 0),
    ("-name", 1),
    ("-iname", 1),
    ("-path", 1),
    ("-ipath", 1),
    ("-wholename", 1),
    ("-iwholename", 1),
    ("-regex", 1),
    ("-iregex", 1),
    ("-regextype", 1),
    ("-lname", 1),
    ("-ilname", 1),
    ("-type", 1),
    ("-xtype", 1),
    ("-size", 1),
    ("-mtime", 1),
    ("-mmin", 1),
    ("-atime", 1),
    ("-amin", 1),
    ("-ctime", 1),
    ("-cmin", 1),
    ("-used", 1),
    ("-newer", 1),
    ("-anewer", 1),
    ("-cnewer", 1),
    ("-samefile", 1),
    ("-user", 1),
    ("-group", 1),
    ("-uid", 1),
    ("-gid", 1),
    ("-perm", 1),
    ("-links", 1),
    ("-inum", 1),
    ("-fstype", 1),
    ("-context", 1),
    ("-maxdepth", 1),
    ("-mindepth", 1),
    ("-printf", 1),
    ("-nouser", 0),
    ("-nogroup", 0),
    ("-empty", 0),
    ("-readable", 0),
    ("-writable", 0),
    ("-executable", 0),
    ("-true", 0),
    ("-false", 0),
    ("-print", 0),
    ("-print0", 0),
    ("-ls", 0),
    ("-prune", 0),
    ("-quit", 0),
    ("-depth", 0),
    ("-d", 0),
    ("-daystart", 0),
    ("-follow", 0),
    ("-ignore_readdir_race", 0),
    ("-noignore_readdir_race", 0),
    ("-mount", 0),
    ("-xdev", 0),
    ("-noleaf", 0),
    ("-warn", 0),
    ("-nowarn", 0),
    ("-not", 0),
    ("-and", 0),
    ("-a", 0),
    ("-or", 0),
    ("-o", 0),
    ("-help", 0),
    ("--help", 0),
    ("-version", 0),
    ("--version", 0),
];

/// Check `find`'s words against `FIND_WORDS`. `-newerXY` takes one value.
pub fn check_find(words: &[String]) -> Result<(), String> {
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if !w.starts_with('-') || w == "-" {
            // A starting point, `(`, `)`, `!` or `,`.
            continue;
        }
        if let Some((_, values)) = FIND_WORDS.iter().find(|(n, _)| n == w) {
            i += values;
            continue;
        }
        if w.strip_prefix("-newer").is_some_and(|xy| xy.len() == 2) {
            i += 1;
            continue;
        }
        return Err(format!(
            "find: {w} is not admitted here (it runs, deletes or writes, or is not a find \
             word this tool knows)"
        ));
    }
    Ok(())
}
