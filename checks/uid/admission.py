"""OpenShift's SCC admission of a pod's pinned UIDs, as far as the chart decides it.

Admission tries every SCC the pod's service account may use, in order (checks/uid/scc.py), and
admits the pod under the first whose strategies validate it whole: one SCC for all its containers.
When none does, restricted-v2 (what every account may use) is what applies, and it admits no pin
it can judge: its range is the namespace's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.model.manifests import Document
from checks.uid.access import ServiceAccount, granted, may_use
from checks.uid.scc import BUILTIN, RESTRICTED, Scc, rendered_sccs


@dataclass(frozen=True)
class Admission:
    """The verdict on one pod's pinned UIDs: the SCC that admits them (None: none does, so
    restricted-v2 applies), and for the SCCs that do not, why (`SCC x admits only UID 1001`)."""

    account: ServiceAccount
    scc: str | None
    refusals: tuple[str, ...] = ()
    candidates: tuple[Scc, ...] = ()

    @property
    def applies(self) -> str:
        return self.scc or RESTRICTED

    def admits_alone(self, uid: object) -> bool:
        """Whether some SCC the account may use admits `uid` (if not the pod's other pins)."""
        return any(scc.run_as_user.admits(uid) for scc in self.candidates)


def usable_sccs(docs: tuple[Document, ...], account: ServiceAccount) -> tuple[Scc, ...]:
    """The SCCs `account` may use, rendered or OpenShift's own granted by the chart, in order."""
    grants = granted(docs, account)
    rendered = rendered_sccs(docs)
    known = {scc.name for scc in rendered}
    builtin = [scc for name, scc in BUILTIN.items() if name not in known and grants.covers(name)]
    usable = [scc for scc in rendered if may_use(scc, account, grants)] + builtin
    return tuple(sorted(usable, key=lambda scc: scc.order))


def admit(docs: tuple[Document, ...], account: ServiceAccount, uids: Sequence[object]) -> Admission:
    """The pod's verdict: the first usable SCC admitting every pinned UID of it."""
    usable = usable_sccs(docs, account)
    for scc in usable:
        if all(scc.run_as_user.admits(uid) for uid in uids):
            return Admission(account, scc.name, candidates=usable)
    refused = [f"SCC {scc.name} {scc.run_as_user.describe()}" for scc in usable]
    names = {scc.name for scc in usable}
    ungranted = [
        f"SCC {scc.name} is not granted to it"
        for scc in rendered_sccs(docs)
        if scc.name not in names
    ]
    return Admission(account, None, tuple(refused + ungranted), usable)
