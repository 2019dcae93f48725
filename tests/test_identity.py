"""One normal form for people: aliases that must be recognised as the same person, and a mailmap."""

from __future__ import annotations

import pytest

from gates.history.changeset import Person
from gates.history.identity import same_person
from gates.model.errors import InputError
from gates.model.identity import identity_of, normalise_email, normalise_name, parse_mailmap


@pytest.mark.parametrize(
    "alias, canonical",
    [
        pytest.param("Ada\u200b Lindqvist", "ada lindqvist", id="zero-width-space"),
        pytest.param("A\u200dda\ufeff Lindqvist", "ada lindqvist", id="joiner-and-bom"),
        pytest.param("\u202eAda Lindqvist", "ada lindqvist", id="bidi-override"),
        pytest.param("\uff21\uff44\uff41 Lindqvist", "ada lindqvist", id="full-width"),
        pytest.param("  ADA \t Lindqvist ", "ada lindqvist", id="case-and-whitespace"),
        pytest.param("Ada Lindqvist\u034f", "ada lindqvist", id="combining-grapheme-joiner"),
        pytest.param("A\u0301da Lindqvist", "ada lindqvist", id="combining-accent"),
        pytest.param("Ada\u3164 Lindqvist", "ada lindqvist", id="hangul-filler"),
        pytest.param("Ada Lindqvist.", "ada lindqvist", id="trailing-full-stop"),
        pytest.param("'Ada' Lindqvist", "ada lindqvist", id="quotes"),
    ],
)
def test_names_normalise(alias, canonical):
    assert normalise_name(alias) == canonical


@pytest.mark.parametrize(
    "alias, canonical",
    [
        pytest.param("ada+ci@kernels.example", "ada@kernels.example", id="plus-tag"),
        pytest.param("ADA+Review+2@Kernels.Example", "ada@kernels.example", id="tag-and-case"),
        pytest.param("a\u200bda@kernels.example", "ada@kernels.example", id="zero-width"),
        pytest.param("<ada@kernels.example>", "ada@kernels.example", id="angle-brackets"),
        pytest.param('"ada"@kernels.example', "ada@kernels.example", id="quoted-local-part"),
        pytest.param("ada@kernels.example.", "ada@kernels.example", id="trailing-dot"),
        pytest.param("mailto:Ada@kernels.example", "ada@kernels.example", id="mailto"),
        pytest.param("ada\u034f@kernels.example", "ada@kernels.example", id="combining-grapheme-joiner"),
        pytest.param("+only@x", "+only@x", id="empty-local-part-kept"),
        pytest.param("not-an-email", "not-an-email", id="no-at"),
        pytest.param("12345+Rita-O@users.noreply.github.com", "rita-o@users.noreply.github.com", id="forge-no-reply"),
        pytest.param("rita-o@users.noreply.github.com", "rita-o@users.noreply.github.com", id="older-forge-no-reply"),
        pytest.param("12345-rita_o@users.noreply.gitlab.com", "rita_o@users.noreply.gitlab.com", id="gitlab-no-reply"),
    ],
)
def test_emails_normalise(alias, canonical):
    assert normalise_email(alias) == canonical


def test_aliases_are_the_same_person_and_strangers_are_not():
    ada = Person("Ada Lindqvist", "ada@kernels.example")
    assert same_person(ada, Person("Someone", "ada+bot@kernels.example"))
    assert same_person(ada, Person("Ada\u200b Lindqvist", "x@y"))
    assert not same_person(ada, Person("Rita Okafor", "rita@kernels.example"))
    assert not same_person(Person("", ""), Person("", ""))


def test_a_look_alike_letter_from_another_script_in_a_latin_name_is_the_same_person():
    rita = Person("Rita Okafor", "rita@kernels.example")
    assert same_person(rita, Person("R\u0456ta Okafor", "r@home.example"))   # Cyrillic і
    assert same_person(rita, Person("Rita \u041ekafor", "r@home.example"))   # Cyrillic О
    assert same_person(rita, Person("Rit\u03b1 Okafor", "r@home.example"))   # Greek α


def test_names_each_written_in_one_script_are_compared_as_they_are():
    assert not same_person(Person("Rita Okafor", "a@x"), Person("Rota Okafor", "b@y"))
    assert not same_person(Person("Анна Петрова", "a@x"), Person("Анна Петрова-Смит", "b@y"))
    assert same_person(Person("Анна Петрова", "a@x"), Person("анна петрова", "b@y"))
    assert not same_person(Person("Ivan Ivanov", "a@x"), Person("Иван Иванов", "b@y"))  # a transliteration is no look-alike
    assert not same_person(Person("Rita Okafor", "a@x"), Person("R\u0456ta Okafur", "b@y"))


def test_a_forge_no_reply_address_is_the_account_it_stands_for():
    rita = Person("Rita Okafor", "rita@kernels.example", login="rita-o")
    assert same_person(rita, Person("R. O.", "12345+rita-o@users.noreply.github.com"))
    assert same_person(rita, Person("R. O.", "rita-o@users.noreply.github.com"))
    assert same_person(Person("x", "12345+rita-o@users.noreply.github.com"), Person("y", "999+Rita-O@users.noreply.github.com"))
    assert not same_person(rita, Person("Someone", "12345+ada-l@users.noreply.github.com"))
    assert not same_person(Person("a", "12345+ada-l@users.noreply.github.com"),
                           Person("b", "12345+rita-o@users.noreply.github.com"))


def test_a_mailmap_maps_a_private_address_to_the_canonical_person():
    mailmap = parse_mailmap(
        "# aliases\n"
        "Ada Lindqvist <ada@kernels.example> <ada.l@home.example>\n"
        "Ada Lindqvist <ada@kernels.example> Laptop <root@laptop>\n"
        "Rita Okafor <rita@kernels.example>\n",
        ".mailmap",
    )
    ada = Person("Ada Lindqvist", "ada@kernels.example")
    assert same_person(ada, Person("al", "ADA.L+x@home.example"), mailmap)
    assert same_person(ada, Person("Laptop", "root@laptop"), mailmap)
    assert not same_person(ada, Person("Other", "root@laptop"), mailmap)
    assert not same_person(ada, Person("al", "ada.l@home.example"))
    assert identity_of("R", "rita@kernels.example", mailmap).name == "rita okafor"


def test_a_mailmap_line_that_is_not_an_entry_names_its_line():
    with pytest.raises(InputError) as raised:
        parse_mailmap("Ada <ada@x> <a@y>\nAda without brackets\n", "people/.mailmap")
    assert (raised.value.path, raised.value.line) == ("people/.mailmap", 2)
