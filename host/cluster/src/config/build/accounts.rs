//! `[[accounts]]` and `[[users]]` into the association tree rooted at `root`.

use std::collections::HashMap;

use toml::Spanned;

use crate::config::schema::{AccountSpec, AssocLimitSpec, UserSpec};
use crate::model::{AssocId, AssocKind, AssocLimits, Association, Qos, QosId, Shares};
use crate::{ConfigError, Source};

use super::{tres_at, value_at};

/// Builds the tree: `root` first, each account after its parent, users under their accounts.
pub fn build_associations(
    accounts: &[AccountSpec],
    users: &[UserSpec],
    qos: &[Qos],
    source: Source<'_>,
) -> Result<Vec<Association>, ConfigError> {
    let mut tree = vec![Association {
        kind: AssocKind::Account("root".into()),
        parent: None,
        children: Vec::new(),
        shares: Shares::Raw(1),
        raw_usage: 0.0,
        priority: 0,
        default_qos: None,
        limits: AssocLimits::default(),
    }];
    let mut account_ids: HashMap<String, AssocId> =
        HashMap::from([("root".to_owned(), AssocId::ROOT)]);
    for spec in accounts {
        let name = spec.account.get_ref();
        if account_ids.contains_key(name) {
            return Err(ConfigError::invalid(
                value_at(source, &spec.account),
                format!("account `{name}` defined twice (or named root)"),
                "unique account names; root is implicit",
            ));
        }
        let parent = match &spec.parent {
            Some(parent) => lookup_account(&account_ids, parent, source)?,
            None => AssocId::ROOT,
        };
        let id = push(
            &mut tree,
            AssocKind::Account(name.clone()),
            parent,
            spec.fairshare,
            spec.raw_usage,
            spec.priority,
            lookup_qos(qos, &spec.default_qos, source)?,
        );
        tree[id.index()].limits = assoc_limits(spec.limit_spec(), qos, source)?;
        check_default_in_list(&tree, id, &spec.default_qos, source)?;
        account_ids.insert(name.clone(), id);
    }
    for spec in users {
        let account = lookup_account(&account_ids, &spec.account, source)?;
        let name = spec.user.get_ref();
        let duplicate = tree[account.index()]
            .children
            .iter()
            .any(|c| tree[c.index()].kind == AssocKind::User(name.clone()));
        if duplicate {
            return Err(ConfigError::invalid(
                value_at(source, &spec.user),
                format!(
                    "user `{name}` twice under account `{}`",
                    spec.account.get_ref()
                ),
                "one association per user and account",
            ));
        }
        let id = push(
            &mut tree,
            AssocKind::User(name.clone()),
            account,
            spec.fairshare,
            spec.raw_usage,
            spec.priority,
            lookup_qos(qos, &spec.default_qos, source)?,
        );
        tree[id.index()].limits = assoc_limits(spec.limit_spec(), qos, source)?;
        check_default_in_list(&tree, id, &spec.default_qos, source)?;
    }
    for (spec_usage, spanned) in accounts
        .iter()
        .map(|a| (a.raw_usage, &a.account))
        .chain(users.iter().map(|u| (u.raw_usage, &u.user)))
    {
        if !(spec_usage >= 0.0 && spec_usage.is_finite()) {
            return Err(ConfigError::invalid(
                source.find_key("RawUsage", spanned.span().start),
                format!("RawUsage = {spec_usage}"),
                "a finite number of at least 0",
            ));
        }
    }
    Ok(tree)
}

fn push(
    tree: &mut Vec<Association>,
    kind: AssocKind,
    parent: AssocId,
    shares: Shares,
    raw_usage: f64,
    priority: u32,
    default_qos: Option<QosId>,
) -> AssocId {
    let id = AssocId(tree.len() as u32);
    tree.push(Association {
        kind,
        parent: Some(parent),
        children: Vec::new(),
        shares,
        raw_usage,
        priority,
        default_qos,
        limits: AssocLimits::default(),
    });
    tree[parent.index()].children.push(id);
    id
}

fn lookup_account(
    ids: &HashMap<String, AssocId>,
    name: &Spanned<String>,
    source: Source<'_>,
) -> Result<AssocId, ConfigError> {
    ids.get(name.get_ref()).copied().ok_or_else(|| {
        ConfigError::invalid(
            value_at(source, name),
            format!("account `{}`", name.get_ref()),
            "root or an account defined above",
        )
    })
}

fn lookup_qos(
    qos: &[Qos],
    name: &Option<Spanned<String>>,
    source: Source<'_>,
) -> Result<Option<QosId>, ConfigError> {
    name.as_ref().map(|n| qos_named(qos, n, source)).transpose()
}

fn qos_named(
    qos: &[Qos],
    name: &Spanned<String>,
    source: Source<'_>,
) -> Result<QosId, ConfigError> {
    qos.iter()
        .position(|q| &q.name == name.get_ref())
        .map(|i| QosId(i as u32))
        .ok_or_else(|| {
            ConfigError::invalid(
                value_at(source, name),
                format!("QOS `{}`", name.get_ref()),
                "a QOS defined in [[qos]]",
            )
        })
}

/// Refuses a `DefaultQOS` outside the QOS list the association has (its own or inherited),
/// as sacctmgr does: jobs taking the default would be refused.
fn check_default_in_list(
    tree: &[Association],
    id: AssocId,
    default: &Option<Spanned<String>>,
    source: Source<'_>,
) -> Result<(), ConfigError> {
    let (Some(name), Some(q)) = (default, tree[id.index()].default_qos) else {
        return Ok(());
    };
    let mut cur = Some(id);
    while let Some(a) = cur {
        if let Some(list) = &tree[a.index()].limits.qos {
            if list.contains(&q) {
                return Ok(());
            }
            return Err(ConfigError::invalid(
                value_at(source, name),
                format!(
                    "DefaultQOS `{}` outside the association's QOS list",
                    name.get_ref()
                ),
                "a DefaultQOS the QOS list (own or inherited) allows",
            ));
        }
        cur = tree[a.index()].parent;
    }
    Ok(())
}

/// The limits an `[[accounts]]` or `[[users]]` table sets on its own association.
fn assoc_limits(
    spec: AssocLimitSpec,
    qos: &[Qos],
    source: Source<'_>,
) -> Result<AssocLimits, ConfigError> {
    let allowed = match &spec.qos {
        Some(names) => Some(
            names
                .iter()
                .map(|n| qos_named(qos, n, source))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        None => None,
    };
    Ok(AssocLimits {
        max_jobs: spec.max_jobs,
        max_submit_jobs: spec.max_submit_jobs,
        max_wall: spec.max_wall,
        max_tres_per_job: tres_at(source, spec.max_tres.as_ref(), "MaxTRES")?,
        max_tres_mins_per_job: tres_at(source, spec.max_tres_mins.as_ref(), "MaxTRESMins")?,
        grp_tres: tres_at(source, spec.grp_tres.as_ref(), "GrpTRES")?,
        grp_jobs: spec.grp_jobs,
        grp_submit_jobs: spec.grp_submit_jobs,
        max_tres_per_node: tres_at(source, spec.max_tres_per_node.as_ref(), "MaxTRESPerNode")?,
        grp_tres_mins: tres_at(source, spec.grp_tres_mins.as_ref(), "GrpTRESMins")?,
        grp_tres_run_mins: tres_at(source, spec.grp_tres_run_mins.as_ref(), "GrpTRESRunMins")?,
        grp_wall: spec.grp_wall,
        qos: allowed,
    })
}
