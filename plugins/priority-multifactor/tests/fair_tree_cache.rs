//! The cached Fair Tree: reused while the association table reads the same, computed again as
//! soon as usage, shares or the tree's shape change, so that answers are those of a fresh policy.

use sluice_plugin_priority_multifactor::Multifactor;
use sluice_sdk::testing::fixtures;
use sluice_sdk::*;

const NOW: i64 = 1_700_000_000;

fn policy() -> Multifactor {
    Multifactor::from_settings(
        &Settings::default().with("weight.fairshare", SettingValue::Integer(100_000)),
    )
}

fn fairshare(p: &Priorities) -> &[f64] {
    &p.factors
        .iter()
        .find(|f| f.name == "FAIRSHARE")
        .expect("a FAIRSHARE factor")
        .values
}

/// The user with the most usage: changing it moves every rank.
fn busiest_user(ctx: &PriorityContext) -> usize {
    (0..ctx.associations.len())
        .filter(|&i| ctx.associations[i].is_user)
        .max_by(|&a, &b| {
            let usage = |i: usize| ctx.associations[i].raw_usage;
            usage(a).total_cmp(&usage(b))
        })
        .expect("the fixture has users")
}

/// Asks `cached` (which has seen other tables before) and a fresh policy about `ctx`; they must
/// agree, and the answer must differ from `before` so that the change was one that mattered.
fn answers_as_fresh(cached: &mut Multifactor, ctx: &PriorityContext, before: &Priorities) {
    let jobs = fixtures::job_table(ctx, 300, 3);
    let answer = cached.compute(ctx, &jobs);
    assert_eq!(
        answer,
        policy().compute(ctx, &jobs),
        "as a fresh policy answers"
    );
    assert_ne!(
        fairshare(&answer),
        fairshare(before),
        "the change moved fair share"
    );
    // sshare's rows come from the same tree; NaN marks blanks, so compare them as text.
    assert_eq!(
        format!("{:?}", cached.shares(ctx)),
        format!("{:?}", policy().shares(ctx))
    );
}

#[test]
fn an_unchanged_table_gives_the_same_answer_again() {
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let jobs = fixtures::job_table(&ctx, 300, 3);
    let mut cached = policy();
    let first = cached.compute(&ctx, &jobs);
    let mut later = ctx.clone();
    later.now += 3600;
    // Names are not what Fair Tree reads; a renamed association keeps the tree.
    later.associations[1].name.push_str("-renamed");
    assert_eq!(cached.compute(&later, &jobs), first);
    assert_eq!(policy().compute(&later, &jobs), first);
}

#[test]
fn a_change_of_usage_is_seen() {
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let jobs = fixtures::job_table(&ctx, 300, 3);
    let mut cached = policy();
    let before = cached.compute(&ctx, &jobs);
    let mut changed = ctx.clone();
    changed.associations[busiest_user(&ctx)].raw_usage = 0.0;
    answers_as_fresh(&mut cached, &changed, &before);
    // And back: the old table is computed again, not remembered as the newest.
    let mut again = policy();
    let changed_answer = again.compute(&changed, &jobs);
    assert_eq!(again.compute(&ctx, &jobs), before);
    assert_ne!(fairshare(&changed_answer), fairshare(&before));
}

#[test]
fn a_change_of_shares_or_shape_is_seen() {
    let ctx = fixtures::priority_context(NOW, 16, 3, 4);
    let jobs = fixtures::job_table(&ctx, 300, 3);
    let busiest = busiest_user(&ctx);

    let mut cached = policy();
    let before = cached.compute(&ctx, &jobs);
    let mut shares = ctx.clone();
    shares.associations[busiest].raw_shares *= 1000;
    answers_as_fresh(&mut cached, &shares, &before);

    let mut cached = policy();
    let before = cached.compute(&ctx, &jobs);
    let mut account = ctx.clone();
    account.associations[busiest].is_user = false;
    answers_as_fresh(&mut cached, &account, &before);

    // Moved under root, the busiest user competes with the accounts instead of its siblings.
    let mut cached = policy();
    let before = cached.compute(&ctx, &jobs);
    let mut moved = ctx.clone();
    moved.associations[busiest].parent = Some(0);
    answers_as_fresh(&mut cached, &moved, &before);
}
