//! `sluice plugin new KIND --lang python|js`: a policy project in Python or JavaScript, from
//! `sdk/template/{python,js}`, naming the checkout's `wit/` and helper library by path.

use std::path::Path;

use anyhow::{Context, bail};

use super::sdk;

/// One kind's policy in both languages, and what the kind's helper gives.
struct KindTemplate {
    kind: &'static str,
    python: &'static str,
    js: &'static str,
    /// The JavaScript helper's export builder for this kind.
    js_export: &'static str,
    /// What the kind's part of the helper library does, for the README.
    helper: &'static str,
    /// Whether the kind's template has settings whose effect `cases.toml` declares.
    cases: bool,
}

const KINDS: &[KindTemplate] = &[
    KindTemplate {
        kind: "priority",
        python: include_str!("../../../../../sdk/template/python/priority.py.in"),
        js: include_str!("../../../../../sdk/template/js/priority.js.in"),
        js_export: "exportPriority",
        helper: "gives named job columns and keeps the association tree",
        cases: true,
    },
    KindTemplate {
        kind: "selection",
        python: include_str!("../../../../../sdk/template/python/selection.py.in"),
        js: include_str!("../../../../../sdk/template/js/selection.js.in"),
        js_export: "exportSelection",
        helper: "keeps the guest's copy of the node table as the contract says",
        cases: false,
    },
    KindTemplate {
        kind: "gres",
        python: include_str!("../../../../../sdk/template/python/gres.py.in"),
        js: include_str!("../../../../../sdk/template/js/gres.js.in"),
        js_export: "exportGres",
        helper: "turns pick, env and validate functions into the export",
        cases: false,
    },
    KindTemplate {
        kind: "hres",
        python: include_str!("../../../../../sdk/template/python/hres.py.in"),
        js: include_str!("../../../../../sdk/template/js/hres.js.in"),
        js_export: "exportHres",
        helper: "keeps the pass's resources and layers, counting the charges it granted",
        cases: false,
    },
];

const PYTHON_README: &str = include_str!("../../../../../sdk/template/python/README.md.in");
const JS_README: &str = include_str!("../../../../../sdk/template/js/README.md.in");
const CASES: &str = include_str!("../../../../../sdk/template/cases.toml.in");
const CASES_TEXT: &str = "`cases.toml` says what the settings do; `plugin test` fails the \
                          policy when they do not. ";

/// Writes `<dir>/<name>/` for a `kind` policy in `lang` (`python` or `js`), using the checkout
/// `sdk` names (or the one [`sdk::locate`] finds).
pub fn new(
    lang: &str,
    kind: &str,
    name: &str,
    dir: &Path,
    sdk: Option<&Path>,
) -> anyhow::Result<()> {
    let Some(template) = KINDS.iter().find(|t| t.kind == kind) else {
        bail!("unknown plugin kind '{kind}': expected priority, selection, gres or hres");
    };
    let (app_file, app, readme) = match lang {
        "python" => ("app.py", template.python, PYTHON_README),
        "js" => ("app.js", template.js, JS_README),
        other => bail!("unknown language '{other}': expected rust, python or js"),
    };
    let (parent, root) = super::scaffold::new_folder(dir, name)?;
    let checkout = sdk::locate(sdk, &parent)?.checkout;
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let root = std::fs::canonicalize(&root)?;
    let from_root = |inside: &str| {
        let path = sdk::path_from(&root, &checkout.join(inside));
        path.to_str()
            .map(str::to_string)
            .context("the checkout's path is not UTF-8; move it to a UTF-8 path")
    };
    let wasm = format!("{}.wasm", name.replace('-', "_"));
    let (wit, sdk_python, sdk_js) = (
        from_root("wit")?,
        from_root("sdk/python")?,
        from_root("sdk/js")?,
    );
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{wasm}}", &wasm)
            .replace("{{wit}}", &wit)
            .replace("{{sdk_python}}", &sdk_python)
            .replace("{{sdk_js}}", &sdk_js)
            .replace("{{kind}}", kind)
            .replace("{{js_export}}", template.js_export)
            .replace("{{helper}}", template.helper)
            .replace(
                "{{cases_arg}}",
                if template.cases {
                    " --cases cases.toml"
                } else {
                    ""
                },
            )
            .replace(
                "{{cases_text}}",
                if template.cases { CASES_TEXT } else { "" },
            )
    };
    if lang == "js" {
        // componentize-js reads modules only below the folder it runs in: the helper comes along.
        let helper = checkout.join("sdk/js/sluice-policy.js");
        std::fs::copy(&helper, root.join("sluice-policy.js"))
            .with_context(|| format!("copying {}", helper.display()))?;
    }
    let mut files = vec![(app_file, fill(app)), ("README.md", fill(readme))];
    if template.cases {
        files.push(("cases.toml", CASES.to_string()));
    }
    for (file, text) in files {
        std::fs::write(root.join(file), text)
            .with_context(|| format!("writing {}", root.join(file).display()))?;
    }
    println!(
        "created {kind} plugin {name} ({lang}) in {}",
        root.display()
    );
    println!("next steps: README.md gives the build, test and swap commands");
    Ok(())
}
