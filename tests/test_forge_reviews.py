"""The forge's review export: which approvals stand, and clear errors for a file that is not one."""

from __future__ import annotations

import json

import pytest

from gates.history.forge_reviews import parse_reviews, standing_approvals
from gates.model.errors import InputError


def review(login, state, when, commit="c" * 40):
    return {"user": {"login": login}, "state": state, "commit_id": commit, "submitted_at": when}


def standing(reviews) -> dict[str, str]:
    return {login: r.state for login, r in standing_approvals(parse_reviews(json.dumps(reviews), "reviews.json")).items()}


def test_the_latest_deciding_review_of_each_user_stands():
    assert standing([
        review("Rita-O", "APPROVED", "2026-12-01T10:00:00Z"),
        review("rita-o", "COMMENTED", "2026-12-01T11:00:00Z"),
        review("ben", "APPROVED", "2026-12-01T10:00:00Z"),
        review("ben", "CHANGES_REQUESTED", "2026-12-01T12:00:00Z"),
        review("max", "CHANGES_REQUESTED", "2026-12-01T09:00:00Z"),
        review("max", "APPROVED", "2026-12-01T13:00:00Z"),
        review("lee", "PENDING", "2026-12-01T13:00:00Z"),
    ]) == {"rita-o": "APPROVED", "max": "APPROVED"}


def test_order_in_the_file_does_not_decide_when_times_are_known():
    assert standing([review("ben", "DISMISSED", "2026-12-02T00:00:00Z"),
                     review("ben", "APPROVED", "2026-12-01T00:00:00Z")]) == {}


def test_slurped_pages_are_one_list():
    pages = [[review("rita-o", "APPROVED", "2026-12-01T10:00:00Z")], [review("ben", "APPROVED", "2026-12-01T10:00:00Z")]]
    assert set(standing(pages)) == {"rita-o", "ben"}


@pytest.mark.parametrize(
    "text, line",
    [("[\n{oops}\n]", 2), ('{"reviews": []}', 1), ('[{"user": {}, "state": "APPROVED"}]', 1)],
    ids=["bad-json", "not-a-list", "no-login"],
)
def test_a_file_that_is_not_a_review_export_names_file_and_line(text, line):
    with pytest.raises(InputError) as raised:
        parse_reviews(text, "reviews.json")
    assert (raised.value.path, raised.value.line) == ("reviews.json", line)
