//! The `#SBATCH` lines of a batch script, read as sbatch reads them: only lines that begin
//! with `#SBATCH` (or the old `#SLURM`), only before the first command, words split on blanks
//! with quotes and backslashes, and a later `#` starting a comment.

/// One word of a directive, with the line it came from (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The script line.
    pub line: usize,
    /// The word, quotes removed.
    pub text: String,
}

/// The words of the script's directives; the error names the line, as sbatch's does.
pub fn directive_words(file: &str, script: &str) -> Result<Vec<Word>, String> {
    let mut words = Vec::new();
    for (i, line) in script.lines().enumerate() {
        let lineno = i + 1;
        let rest = if let Some(rest) = line.strip_prefix("#SBATCH") {
            rest
        } else if let Some(rest) = line.strip_prefix("#SLURM") {
            rest
        } else if line.trim_start().is_empty() || line.trim_start().starts_with('#') {
            continue;
        } else {
            // The first command ends the directives; later #SBATCH lines are comments.
            break;
        };
        for text in split_words(file, lineno, rest)? {
            words.push(Word { line: lineno, text });
        }
    }
    Ok(words)
}

/// Splits a directive's text into words as sbatch's `_get_argument` does.
fn split_words(file: &str, lineno: usize, text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            return Ok(words);
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        let mut comment = false;
        while let Some(&c) = chars.peek() {
            if quote.is_none() && c.is_whitespace() {
                break;
            }
            chars.next();
            match (quote, c) {
                (_, '\\') => {
                    if let Some(next) = chars.next() {
                        word.push(next);
                    }
                }
                (Some(q), c) if c == q => quote = None,
                (Some(_), c) => word.push(c),
                (None, '"' | '\'') => quote = Some(c),
                (None, '#') => {
                    comment = true;
                    break;
                }
                (None, c) => word.push(c),
            }
        }
        if let Some(q) = quote {
            return Err(format!(
                "{file}: line {lineno}: Unmatched `{q}` in [{}]",
                text.trim_end()
            ));
        }
        if !word.is_empty() {
            words.push(word);
        }
        if comment {
            return Ok(words);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<String> {
        directive_words("job.sh", script)
            .unwrap()
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn directives_stop_at_the_first_command() {
        let script = "#!/bin/bash\n#SBATCH -N 2\n\n# a comment\n  #SBATCH --ignored-indented\n#SBATCH --time=5 # two\necho hi\n#SBATCH --mem=1G\n";
        assert_eq!(texts(script), vec!["-N", "2", "--time=5"]);
    }

    #[test]
    fn quotes_group_words_and_backslashes_escape() {
        let script = "#!/bin/sh\n#SBATCH --comment=\"two words\" -J 'a b' --x=\\\"q\\#\n";
        assert_eq!(
            texts(script),
            vec!["--comment=two words", "-J", "a b", "--x=\"q#"]
        );
    }

    #[test]
    fn words_carry_their_line_and_unmatched_quotes_name_it() {
        let words = directive_words("job.sh", "#!/bin/sh\n#SBATCH -N 1\n#SBATCH -n 3\n").unwrap();
        assert_eq!(words[2].line, 3);
        let err = directive_words("job.sh", "#!/bin/sh\n#SBATCH --comment=\"open\n").unwrap_err();
        assert_eq!(err, "job.sh: line 2: Unmatched `\"` in [ --comment=\"open]");
    }

    #[test]
    fn old_slurm_prefix_is_read_too() {
        assert_eq!(texts("#!/bin/sh\n#SLURM -p debug\n"), vec!["-p", "debug"]);
    }
}
