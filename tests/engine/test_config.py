"""`.github/chart-review.yml`: what a typo in a check's name does (an error naming it, never a
silently ignored setting)."""

from __future__ import annotations

import pytest

from bot.model.config import MAX_LINKED_REPOSITORIES, ConfigError, layout_of_text, parse_config
from checks import REGISTRY

NAMES = ("qos", "version", "headings", "uid", "probes", "selectors")
KNOWN = tuple(o for o in REGISTRY.options if o.name in NAMES)


def test_a_check_name_with_a_typo_is_an_error_naming_the_line() -> None:
    text = "release_name: r\nchecks:\n  qoss:\n    enabled: false\n"
    with pytest.raises(
        ConfigError, match=r"line 3: 'checks.qoss': unknown check \(one of headings"
    ):
        parse_config(text, known_checks=KNOWN)


@pytest.mark.parametrize("name", ["version", "probes"])
def test_a_top_level_check_under_checks_says_where_it_belongs(name: str) -> None:
    with pytest.raises(ConfigError, match=rf"line 2: 'checks.{name}': .* top-level '{name}:' key"):
        parse_config(f"checks:\n  {name}:\n    enabled: false\n", known_checks=KNOWN)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("checks:\n  qos:\n    enabeld: false\n", "line 3: unknown key 'checks.qos.enabeld'"),
        ("version:\n  ignored: [docs/**]\n", "line 2: unknown key 'version.ignored'"),
        ("probes:\n  forbidden: {}\n", "line 2: unknown key 'probes.forbidden'"),
    ],
)
def test_an_unknown_key_under_a_check_is_an_error_naming_it(text: str, where: str) -> None:
    # A typo would otherwise leave the check on (or the paths unignored) without a word.
    with pytest.raises(ConfigError, match=where):
        parse_config(text, known_checks=KNOWN)


def test_known_checks_and_their_options_are_accepted() -> None:
    config = parse_config(
        "checks:\n  qos:\n    severity: {downgrade: warning}\n  uid: {enabled: false}\n"
        "version:\n  enabled: false\n",
        known_checks=KNOWN,
    )
    assert not config.enabled("uid") and not config.enabled("version") and config.enabled("qos")


def test_links_default_to_no_allow_list_and_five_repositories() -> None:
    links = parse_config("release_name: r\n").links
    assert (links.repositories, links.max_repositories) == (None, MAX_LINKED_REPOSITORIES)
    assert MAX_LINKED_REPOSITORIES == 5
    assert links.allows("anyone/anything")


def test_the_links_allow_list_takes_names_and_owner_globs_case_insensitively() -> None:
    links = parse_config(
        "links:\n  repositories: [acme/backend, tools/*]\n  max_repositories: 2\n"
    ).links
    assert links.max_repositories == 2
    assert [
        links.allows(n) for n in ("acme/backend", "Acme/Backend", "tools/ci", "acme/other")
    ] == [
        True,
        True,
        True,
        False,
    ]
    assert not parse_config("links:\n  repositories: []\n").links.allows("acme/backend")


def test_more_than_five_linked_repositories_is_an_error_naming_key_and_line() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^\.github/chart-review\.yml line 3: 'links\.max_repositories': Input should be "
        r"less than or equal to 5$",
    ):
        parse_config("release_name: r\nlinks:\n  max_repositories: 6\n")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("links:\n  max_repositories: -1\n", r"line 2: 'links\.max_repositories': .* 0"),
        ("links:\n  repositories: [acme]\n", r"line 2: 'links\.repositories': .*'acme'"),
        ("links:\n  repositories: ['*/*']\n", r"line 2: 'links\.repositories': .*OWNER/\*"),
        ("links:\n  repositories: acme/x\n", r"line 2: 'links\.repositories': "),
        ("links:\n  repos: [acme/x]\n", r"line 2: unknown key 'links\.repos'"),
    ],
)
def test_a_wrong_links_setting_is_an_error_naming_key_and_line(text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_config(text)


def test_kube_version_and_api_versions_are_read_as_helm_takes_them() -> None:
    text = 'kube_version: "1.29"\napi_versions: [monitoring.coreos.com/v1, "b.io/v2,v1"]\n'
    config = parse_config(text)
    assert config.kube_version == "v1.29.0"
    assert config.api_versions == ["b.io/v2", "monitoring.coreos.com/v1", "v1"]
    assert parse_config(None).capabilities.cache_id == ""


@pytest.mark.parametrize(
    ("text", "match"),
    [
        # YAML reads an unquoted 1.30 as the number 1.3: said, never rendered for Kubernetes 1.3.
        ("kube_version: 1.30\n", r"line 1: 'kube_version': .*number 1.3: quote the version"),
        ('kube_version: "latest"\n', r"line 1: 'kube_version': .*'latest' is not a Kubernetes"),
        ("charts: [a]\napi_versions: [a b/v1]\n", r"line 2: 'api_versions': .*not an API version"),
    ],
)
def test_a_bad_kube_or_api_version_is_an_error_naming_key_and_line(text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_config(text)


def test_lines_named_are_git_s_even_after_a_line_separator() -> None:
    """PyYAML breaks lines at U+2028 and NEL too; the line a config error names is the one git
    and GitHub show (issue 39's rule)."""
    text = 'namespace: "first\u2028second"\nrelease_name: x\nunknown_key: 1\n'
    with pytest.raises(ConfigError, match=r"^\.github/chart-review\.yml line 3: unknown key"):
        parse_config(text)
    # A separator in a comment ends it for YAML: the next words are no comment, and the error
    # names git's line 2, where they are.
    with pytest.raises(ConfigError, match=r"line 2: not valid YAML"):
        parse_config("# a note\u2028with a separator\nrelease_name: x\n")


def test_check_runs_is_one_by_default_or_per_check() -> None:
    assert parse_config(None).check_runs == "one"
    assert parse_config("check_runs: per-check\n").check_runs == "per-check"
    with pytest.raises(
        ConfigError, match=r"line 2: 'check_runs': Input should be 'one' or 'per-check'"
    ):
        parse_config("release_board: true\ncheck_runs: each\n")


@pytest.mark.parametrize(
    ("text", "layout"),
    [
        ("check_runs: per-check\nchecks: {nope: {enabled: false}}\n", "per-check"),
        ("check_runs: per-check\nnot a: [mapping\n", "one"),
        ("- a list\n", "one"),
        (None, "one"),
    ],
    ids=["rest-invalid", "not-yaml", "not-a-mapping", "no-file"],
)
def test_the_layout_is_read_even_from_a_config_that_cannot_be_used(
    text: str | None, layout: str
) -> None:
    """Its runs are begun before the review reports the config's error: a repository whose branch
    protection requires `chart-review/qos` keeps getting that run."""
    assert layout_of_text(text) == layout
