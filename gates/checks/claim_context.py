"""What the blocks around a block make of its words, for the claims engine (`gates.checks.claim_detection`).

A sentence is judged in its clause, but some of what it means is said by its neighbours:

- **lead-ins** above a code block's output or a table ("Before:", "With this PR:", "Baseline numbers on main:",
  "Operator: `layer_norm`") say whose values the lines under them are (`LeadIn`, `not_read_alone`);
- **fenced blocks that give one label twice**, or a base line and another arm's line, hold two arms
  (`fences_with_two_arms`), and prose right after a code block can name the change's arm (`change_named_after`);
- **a note beside a table** can make its rate columns a kernel's own (`rows_of_kernel_rate_tables`);
- **a reply under a blockquote** can doubt how the quoted numbers were measured (`reply_doubts_the_quote`);
- **the paragraph after an excused number** can give that number to this change (`number_given_to_the_change`);
- **where a block stands** in the Markdown source: a blockquote or a list item (`is_quoted`, `is_list_item`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gates.checks.claim_mood import RESULT_VALUE, backs_a_quotation, names_this_change, states_relative_result
from gates.checks.claim_sources import gives_our_side, names_an_arm
from gates.checks.claim_vocabulary import ARM_NAMES, NUMBER
from gates.model.markdown_prose import ProseBlock

_I = re.IGNORECASE
_LIST_MARKER = re.compile(r"[ \t>]*(?:[-*+]|\d{1,3}[.)])[ \t]+")


# "> decode is 15% faster with this change" above "I'm not convinced yet: … please rerun both": the reply doubts what it quotes
_DOUBTED_REPLY = re.compile(r"\b(?:not\s+convinced|not\s+sure|i\s+doubt|doubtful|skeptical|sceptical|not\s+apples\s+to\s+apples"
                            r"|mix(?:es|ing)?\s+two\s+things|(?:can|could)\s+you\s+re-?run|please\s+re-?run|before\s+we\s+(?:read|quote|believe))\b"
                            r"|不太相信|存疑|怀疑|请重跑|麻烦重跑", re.IGNORECASE)
# What the doubt is about: how the numbers were measured ("the two runs used different flags", "please rerun both"), not
# where the gain comes from ("I'm not convinced it's all the kernel; commit 3 also helps")
_FLAWED_COMPARISON = re.compile(r"\bre-?run|\bdifferent\s+(?:flags|settings|configs?|machines?|builds?)\b|\bsame\s+(?:flags|settings|config)\b"
                                r"|\bmix(?:es|ing)?\s+two\b|\bnot\s+apples|\bnoise\b|\bvariance\b|\b(?:one|single)\s+run\b|\bwarm[\s\-]?up\b"
                                r"|\benforce[\-_]eager\b|不同的?参数|重跑|噪声|只跑了一次", re.IGNORECASE)
_CREDITS_IT = re.compile(r"\ball\s+(?:the|from\s+the)\s+\w+|\bcomes?\s+from\b|\balso\s+helps\b|\bpart\s+of\s+(?:it|the\s+gain)\b"
                         r"|\bwhich\s+commit\b|都来自|来自哪", re.IGNORECASE)
# "Rerun with identical flags: still 15%", "Done, same flags: +18.6%", "同一驱动版本重跑完毕：1.29 倍": the doubt answered
_RERUN_CONFIRMS = re.compile(r"\b(?:re-?ran|re-?run|reran|done)\b[^.\n]{0,80}?\d|重跑[^。\n]{0,40}?\d", re.IGNORECASE)
_OWN_MEASURE = re.compile(r"\b(?:we|i)\s+(?:measured|saw|got|reproduced|confirmed)\b|\bit\s+(?:does|holds|is\s+real)\b", re.IGNORECASE)
_QUOTE_MARKER = re.compile(r"[ \t]*>")


def reply_doubts_the_quote(reply: str, later: list[str]) -> bool:
    """Whether a paragraph right under a blockquote doubts how the quoted numbers were measured ("I'm not convinced
    yet: the two runs used different flags, please rerun both"), without crediting the gain elsewhere, measuring it
    itself, or a later paragraph answering the doubt with a rerun's number."""
    return bool(_DOUBTED_REPLY.search(reply) and _FLAWED_COMPARISON.search(reply) and not _CREDITS_IT.search(reply)
                and not (names_this_change(reply) or _OWN_MEASURE.search(reply))
                and not any(_RERUN_CONFIRMS.search(text) for text in later))


def _line_marker(source: str, block: ProseBlock, marker: re.Pattern) -> tuple[re.Match | None, int]:
    """The `marker` at the start of the source line that holds the block's first character, and that character's offset."""
    start = block.offsets[0] if block.offsets else 0
    return marker.match(source, source.rfind("\n", 0, start) + 1), start


def is_quoted(source: str, block: ProseBlock) -> bool:
    """Whether the block stands in a blockquote ("> …") of the Markdown source."""
    return _line_marker(source, block, _QUOTE_MARKER)[0] is not None


def is_list_item(source: str, block: ProseBlock) -> bool:
    """Whether the block is the text of a list item: its first character stands right after a list marker."""
    found, start = _line_marker(source, block, _LIST_MARKER)
    return found is not None and found.end() == start  # a task item's box ("- [ ] …") is part of its text


# Excuses that a next paragraph naming the change can take back: "…; that's the bar people will compare us against."
# above "With this branch we do 4,100.", 'The title says "30% lower TTFT" but …' above "That number is from our staging
# canary running this branch."
GIVEN_ELSEWHERE = ("a number from elsewhere", "the base arm alone", "a quotation the sentence says is not backed", "a plan")


def number_given_to_the_change(excused_reason: str, text: str) -> str | None:
    """The result words when the paragraph `text`, right after one whose last verdict was excused for
    `excused_reason` (one of GIVEN_ELSEWHERE), gives that number to this change: it names the change's arm and gives
    a number of its own, or (after a quotation) backs the quoted words. None when it does not."""
    taken = excused_reason.startswith(("a number from elsewhere", "the base arm alone"))
    named = _CHANGE_ARM.search(text) or _HEAD_ARM.search(text) or (taken and names_an_arm(text))
    number = NUMBER.search(text)
    if taken and not (named and number) and gives_our_side(text) and not _DEFERRED.search(text):
        return text[:60]  # "We match that now.", "Split-KV: about a quarter more."
    quoted = excused_reason.startswith("a quotation")
    if not ((named and number) or (quoted and backs_a_quotation(text))) or _DEFERRED.search(text):
        return None
    return number.group(0) if number else named.group(0) if named else ""


def fences_with_two_arms(blocks: list[ProseBlock]) -> set[int]:
    """Indexes of the lines of each fenced block that gives one label twice ("Output token throughput (tok/s): 4480.2" and,
    under "split route bs = 1", "…: 5893.7"): two arms in one block, whatever lead-in calls it the base's."""
    found: set[int] = set()
    group: list[int] = []
    for index, block in enumerate(blocks + [None]):
        if block is not None and block.kind in CODE_KINDS:
            group.append(index)
            continue
        labels = [m.group(1).strip().lower() for m in (_LABELLED_VALUE.match(blocks[i].text) for i in group) if m]
        texts = [blocks[i].text for i in group]
        if len(labels) != len(set(labels)) or (any(_BASE_LINE.search(t) for t in texts)
                                               and any(_OTHER_ARM.search(t) and NUMBER.search(t) for t in texts)):
            found.update(group)
        group = []
    return found


_ONE_COLUMN = re.compile(r"\b(?:is|are)\s+the\s+(?:left|right|first|second)\s+column\b|(?:左|右|第一|第二)列", _I)
_BASE_LINE = re.compile(r"\b(?:main|baseline|before|master)\b|改动前|基线", re.IGNORECASE)
_LABELLED_VALUE = re.compile(r"^\s*([^:=\d][^:=]{1,60}?)\s*[:=]\s*[~≈]?\d")


@dataclass(frozen=True)
class LeadIn:
    """What the prose just before a code block's output or a table says of the lines under it, read once."""

    names_an_arm: bool = False  # "Before:", "With this PR:": configuration lines under it are arms' values
    names_the_change: bool = False  # outside a phrase that names only the base ("before any change in this PR")
    base_only: bool = False  # "This is what main gives me today, before any change:"
    kernel_label: bool = False  # "Operator: `layer_norm`": the rows under it time the operator
    # "main vs this PR:", "Main branch baseline, then the same run with this PR:": output lines under it give both arms'
    # values side by side ("mean_ttft_ms   412.3   288.1")
    names_two_arms: bool = False

    @classmethod
    def of(cls, text: str) -> "LeadIn":
        names_the_change = bool(_CHANGE_ARM.search(_BASE_ARM_ONLY.sub(" ", text)))
        one_column = bool(_BASE_LINE.search(text) and _ONE_COLUMN.search(text))  # "Main … is the left column:"
        return cls(bool(_ARM_LEAD.search(text)), names_the_change, bool(_BASE_ARM_ONLY.search(text)),
                   bool(_KERNEL_LABEL_LEAD.match(text)), (names_the_change and names_both_arms(text)) or one_column)


def names_both_arms(text: str) -> bool:
    """The text names the base arm and the change's ("main vs this PR", "# main, this PR", 基线和本 PR 的对比)."""
    return bool(_BASE_LINE.search(text) and _CHANGE_ARM.search(text))


def not_read_alone(block: ProseBlock, following: ProseBlock | None, lead: LeadIn) -> bool:
    """Whether a block's words are not judged on their own: a configuration line that no arm stands above
    ("ttft_p99_ms: 500"), output of the base arm alone, a table's header row or a row of arm names under it (their
    words are read with each row of values)."""
    if block.kind == "config line":
        return not lead.names_an_arm
    if block.kind in CODE_KINDS:
        return not lead.names_the_change and not _CHANGE_ARM.search(block.text) \
            and (block.kind == "base output" or lead.base_only)
    if block.kind == "table row":
        if _TODO_CELL.search(block.text):
            return True  # "| step time | 8B SFT, 8x H100 | TODO |": a row of a plan
        if lead.base_only and not lead.names_the_change and not _CHANGE_ARM.search(block.header + " " + block.text) \
                and not _OTHER_ARM.search(block.header or block.text) and not states_relative_result(block.text):
            return True  # "Baseline numbers on main (patch not applied yet):" above "| metric | main |"
        header_row = not block.header and following is not None and following.header == block.text
        return header_row or bool(block.header and _ARM_NAMES_ONLY.fullmatch(block.text))
    return False


def change_named_after(blocks: list[ProseBlock], index: int) -> bool:
    """The prose just after the code block that holds blocks[index] names the change's arm ("Update: the `+` lines
    are the rebuilt wheel from this branch", "cand = HEAD of the branch"): its lines are then no base's alone."""
    after = next((block for block in blocks[index + 1:] if block.kind not in CODE_KINDS), None)
    return after is not None and bool(_CHANGE_ARM.search(after.text) or _HEAD_ARM.search(after.text)) \
        and not _DEFERRED.search(after.text)


CODE_KINDS = ("code output", "base output", "config line")


def lines_of_the_base_named_after(blocks: list[ProseBlock]) -> set[int]:
    """Indexes of the output lines and table rows whose block the prose just after it calls the base's ("That's main.
    My branch segfaults …", "These are the current numbers on v0.7.1, to give reviewers a baseline; results with the
    patch will come after …"), where that prose gives the change no value of its own and the line names no other arm.
    Found in one pass from the end, so a long block is not read again for each of its lines."""
    found: set[int] = set()
    base_named = False  # what the nearest prose after the current block says
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        if base_named and (block.kind in CODE_KINDS or block.kind == "table row") \
                and not _CHANGE_ARM.search((block.header or "") + " " + block.text):
            found.add(index)
        # (a line of prose right under a table, with no blank line, is read as a row of one cell)
        if block.kind not in CODE_KINDS and not (block.kind == "table row" and not _ONE_CELL.match(block.text)):
            base_named = bool(_BASE_NAMED_AFTER.search(block.text)) \
                and not (_CHANGE_ARM.search(block.text) and RESULT_VALUE.search(block.text))
    return found


_BASE_NAMED_AFTER = re.compile(
    r"^\W*(?:that['’]s|this\s+is|those\s+are|these\s+are)\s+(?:(?:the|our)\s+)?(?:(?:current|baseline|reference)\s+)?"
    r"(?:(?:numbers|results)\s+(?:on|for|from|of)\s+)?(?:main|master|the\s+baseline|v?\d+\.\d+(?:\.\d+)?)\b"
    r"|\bto\s+give\s+(?:reviewers|you|everyone|people)\s+a\s+baseline\b|^\W*(?:以上|上面)(?:的数据)?是\s*(?:main|master|基线)", _I)
_ONE_CELL = re.compile(r"^[^|]*[^|\s][^|]*(?:\|\s*)*$")  # "These are the current numbers … |  | ": one cell, the rest empty
_TODO_CELL = re.compile(r"\|\s*(?:todo|tbd|pending|n/a|待补充|待测|未测)\s*\|?\s*$", _I)
# Another arm than the base, named in a header or a line: "this PR", "branch", "split-kv", "candidate", "Δ", 本 PR
_OTHER_ARM = re.compile(r"\b(?:this\s+pr|pr|after|patched|branch|split[\w\-]*|new|candidate|cand|ours|delta|diff|change|speedup|vs)\b|Δ"
                        r"|本\s*PR|本分支|改动后|合入后", _I)
# "cand = HEAD of the branch", "当前提交即本分支 HEAD": the change's arm named by its commit
_HEAD_ARM = re.compile(r"(?-i:\bHEAD\b)|\bthe\s+branch\b|本分支|当前提交"
                       # "rebuilt with these commits", "cherry-picked the three commits above": the change by its commits
                       r"|\bthese\s+(?:\w+\s+)?commits\b|\bthe\s+(?:\w+\s+){0,2}?commits?\s+above\b|\bthis\s+commit\b"
                       r"|\bsplit[\w\-]*\s+(?:build|version|arm|path|route)\b|\bwe\s+(?:now\s+)?(?:clear|beat|match|exceed)\w*\b"
                       r"|(?:换成|切到|开启|打开)[^，。；:：]{0,16}(?:版本|后)", _I)
# "Numbers with the fix come in the follow-up": the change's arm named as still to come
_DEFERRED = re.compile(r"\b(?:will|later|follow[\s\-]?up|comes?\s+(?:in|later|next)|coming|once|not\s+yet|pending|tbd|todo)\b|['’]ll\b"
                       r"|稍后|后续|待补充|之后再", _I)
_ARM_LEAD = re.compile(r"\b(?:this\s+(?:pr|change|branch|patch)|main|baseline|before|after|with\s+this)\b|本\s*PR|改动[前后]|合入[前后]",
                       _I)
# "Operator: `layer_norm` (FlagGems Triton)" above a table of timings: the rows under it are the operator's
_KERNEL_LABEL_LEAD = re.compile(r"\W*(?:operators?|ops?|kernels?|micro-?benchmarks?|算子|内核)"
                                r"(?:\s+(?:perf(?:ormance)?|bench(?:marks?)?|timings?|latenc(?:y|ies)|results?))?\s*[:：(`]", _I)
_ARM_NAMES_ONLY = re.compile(rf"[\s|]*(?:(?:{ARM_NAMES}|ours|old|new|base)[\s|]*)+", _I)
_BASE_ARM_ONLY = re.compile(r"\b(?:on\s+main|main\s+(?:gives|gave|shows|showed|today|currently|produces)|from\s+main"
                            r"|current\s+main|before\s+this\s+(?:pr|patch|branch)"
                            r"|before\s+(?:any|this|the)\s+changes?(?:\s+(?:in|of|from)\s+this\s+(?:pr|change)"
                            r"(?:\s+series)?)?|without\s+this\s+(?:pr|change|patch)"
                            r"|baseline\s+(?:only|run|numbers?)"
                            # "(nothing from this branch yet)": the change's arm named only to say it is not here
                            r"|(?:nothing|no\s+(?:numbers?|results?))\s+(?:from|for|of)\s+this\s+(?:pr|branch|change|patch)\s+yet)\b"
                            r"|改动前|合入前|主干上"
                            # "<summary>main branch output</summary>"
                            r"|^\W*(?:main|master|baseline)(?:\s+branch)?(?:\s+reference)?\s+(?:output|numbers|results?|runs?)\b", _I)
_CHANGE_ARM = re.compile(r"\bthis\s+(?:pr|branch|change|patch)\b|\bwith\s+(?:the\s+)?(?:patch|change|fix)\b|\bafter\b"
                         r"|\bpatched\b|本\s*PR|改动后|合入后", _I)
# "(tok/s here means tokens rotated per second by the op alone.)", "表中“吞吐”一列是该 kernel 每秒处理的 token 数": a note
# beside a table that makes its rate columns a kernel's or an op's own
_KERNEL_RATE_NOTE = re.compile(
    r"(?:tok(?:en)?s?\s*/\s*s|tokens?\s+per\s+second|throughput|吞吐)[^.。;；]{0,60}?"
    r"(?:\bhere\s+means\b|\bmeans\b|\brefers\s+to\b|\bis\s+(?:the\s+)?(?:number|count|rate)\b|一列是|是指|表示|指的是)"
    r"[^.。;；]{0,80}?(?P<op>\b(?:op|kernel|operator|GEMM)s?\b[^.。;；]{0,20}?\b(?:alone|itself|only|in\s+isolation)\b"
    r"|(?:该|这个)?\s*(?:kernel|算子|内核)\s*(?:自身)?\s*每秒)", _I)


_NEGATION_BEFORE = re.compile(r"(?:\bnot\b|n['’]t\b|\brather\s+than\b|\binstead\s+of\b|不是|而不是|并非)[^.。;；]{0,30}$", _I)
_SERVER_WORDS = re.compile(r"\b(?:server|serving|service|job|users?|end[\s\-]to[\s\-]end|e2e|model|pipeline)\b|服务|整个|端到端", _I)


def _kernel_rate_note(note: str) -> bool:
    """The note makes a table's rate columns an op's own, and says nothing of a server's rate except to deny it."""
    found = _KERNEL_RATE_NOTE.search(note)
    if not found or _NEGATION_BEFORE.search(note, 0, found.start("op")):
        return False
    return all(_NEGATION_BEFORE.search(note, 0, server.start()) for server in _SERVER_WORDS.finditer(note))


def rows_of_kernel_rate_tables(blocks: list[ProseBlock]) -> set[int]:
    """The indices of the table rows whose table has, right before or right after it, a note that makes its
    rate columns (tok/s, throughput, 吞吐) a kernel's or an op's own."""
    rows: set[int] = set()
    index = 0
    while index < len(blocks):
        if blocks[index].kind != "table row":
            index += 1
            continue
        end = index
        while end + 1 < len(blocks) and blocks[end + 1].kind == "table row" and blocks[end + 1].header \
                and blocks[end + 1].header in (blocks[end].header, blocks[end].text):  # the same table's next row
            end += 1
        beside = [blocks[i].text for i in (index - 1, end + 1) if 0 <= i < len(blocks) and blocks[i].kind != "table row"]
        if any(_kernel_rate_note(note) for note in beside):
            rows.update(range(index, end + 1))
        index = end + 1
    return rows
