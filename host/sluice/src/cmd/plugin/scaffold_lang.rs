//! `sluice plugin new --lang python|js`: a priority policy project in Python or JavaScript,
//! from `sdk/template/{python,js}`, naming the checkout's `wit/` and helper library by path.

use std::path::Path;

use anyhow::{Context, bail};

use super::sdk;

const PYTHON_APP: &str = include_str!("../../../../../sdk/template/python/app.py.in");
const PYTHON_README: &str = include_str!("../../../../../sdk/template/python/README.md.in");
const JS_APP: &str = include_str!("../../../../../sdk/template/js/app.js.in");
const JS_README: &str = include_str!("../../../../../sdk/template/js/README.md.in");
const CASES: &str = include_str!("../../../../../sdk/template/cases.toml.in");

/// Writes `<dir>/<name>/` for a `kind` policy in `lang` (`python` or `js`), using the checkout
/// `sdk` names (or the one [`sdk::locate`] finds).
pub fn new(
    lang: &str,
    kind: &str,
    name: &str,
    dir: &Path,
    sdk: Option<&Path>,
) -> anyhow::Result<()> {
    if kind != "priority" {
        bail!("{lang} policies are priority policies for now; write a {kind} policy in Rust");
    }
    let (app_file, app, readme) = match lang {
        "python" => ("app.py", PYTHON_APP, PYTHON_README),
        "js" => ("app.js", JS_APP, JS_README),
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
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{wasm}}", &wasm)
            .replace("{{wit}}", &wit)
            .replace("{{sdk_python}}", &sdk_python)
            .replace("{{sdk_js}}", &sdk_js)
    };
    if lang == "js" {
        // componentize-js reads modules only below the folder it runs in: the helper comes along.
        let helper = checkout.join("sdk/js/sluice-policy.js");
        std::fs::copy(&helper, root.join("sluice-policy.js"))
            .with_context(|| format!("copying {}", helper.display()))?;
    }
    for (file, text) in [
        (app_file, fill(app)),
        ("README.md", fill(readme)),
        ("cases.toml", CASES.to_string()),
    ] {
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
