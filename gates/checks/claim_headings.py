"""What the heading or lead-in above a clause makes of it: a plan, a target list, a bug or incident report.

Items under "## Roadmap", "Next steps:" or an open task "- [ ] …" say what to do; bounded items under "## Requirements"
or "## 下季度目标" are targets; what stands under "### Describe the bug" or "## Incident …" is what someone saw; a capacity
or rollout plan ("## Capacity plan", "Rollout plan:", 容量规划：) is planned throughout. An item that names the change,
says it was measured or done, or gives a result as its reason is read as it stands (`gates.checks.claim_mood`).
"""

from __future__ import annotations

import re

from gates.checks.claim_mood import IMPERATIVE_VERBS, Mood, names_this_change, says_done, says_measured, states_a_change

_I = re.IGNORECASE

# A heading or lead-in over what is still to be done: "## Roadmap (Q3)", "Plan:", "## 下一步"
_PLAN_WORDS = r"roadmap|plans?|planned\s+work|goals?|milestones?|next\s+steps?|todo|to\s*do|future\s+work|follow[\s\-]?ups?"
_ZH_PLAN_WORDS = r"路线图|计划|规划|目标|下一步|后续(?:工作|计划)?|待办"
_PLAN_HEADING = re.compile(rf"^\W*(?:(?:q[1-4]|h[12]|\d{{4}})\s+)?(?:{_PLAN_WORDS}|wish\s*list|backlog)\b|^\W*(?:{_ZH_PLAN_WORDS})", _I)
# A plan's label alone on its line, above a list: "Roadmap:", "Next steps (Q3):", "下一步："
_PLAN_LABEL = re.compile(rf"^\W*(?:{_PLAN_WORDS}|{_ZH_PLAN_WORDS})[^:：]{{0,24}}[:：]\s*$", _I)
# An item that says what to do, not what was done: "- Reduce TTFT for prompts > 32k tokens", "Training: reach 50% MFU"
_TO_DO_ITEM = re.compile(rf"^\W*(?:[\w\-/ ]{{1,24}}:\s*)?{IMPERATIVE_VERBS}\b|^\W*(?:[\w\-/ ]{{1,24}}[:：]\s*)?(?:将|把|降低|提升|提高|减少|缩短|达到|实现)",
                         _I)


# "…, since it gives Llama-3-8B 30% lower TTFT", "given the 1.4x it brought", "(1.4x output tok/s on Llama-3-8B)",
# "把这次首字延迟下降 30% 的改动推到生产环境": a result the item gives as its reason, or of the change it acts on
_REASON_WITH_RESULT = re.compile(r"\b(?:since|given|because|as)\b|\b(?:it|this|that)\s+(?:gives|gave|brings|brought|takes|took"
                                 r"|gets|got|makes|made|yields|yielded|delivers|delivered)\b|[—–]\s*(?:it|this)\b"
                                 r"|\((?![^)]*\b(?:goal|target|aim)\b)[^)]*?(?:\d\s*(?:%|x|×|倍)|from\s+[\d.]+\s*\S*\s+to)[^)]*\)"
                                 r"|这次|这个让|让[^，。；]{0,24}?(?:降低|提升|下降|提高|加快|缩短)|(?:降低|提升|下降|提高|加快|缩短)[^，。；]{0,16}?的\s*(?:改动|开关|路径|修改|优化)",
                                 _I)
_TARGET_HEADING = re.compile(r"^(?=.{0,40}$)\W*(?:[\w\-]+\s+){0,3}?(?:requirements?|acceptance\s+criteria|success\s+criteria|exit\s+criteria"
                             r"|targets?|goals?|slos?|non[\s\-]functional\s+requirements?)\b"
                             r"|^(?=.{0,40}$)[^。；]{0,10}?(?:需求|验收标准|目标|指标要求)", _I)
_BOUND_SIGN = re.compile(r"<=|>=|≤|≥|(?<![\-<])<(?![\-<])|(?<![\->])>(?![>])|\b(?:under|below|above|at\s+most|at\s+least|within|no\s+more\s+than)\b"
                         r"|不超过|不低于|低于|高于|以内|以上|达到|\breach(?:es)?\b", _I)
_OPEN_TASK = re.compile(r"^\W*\[ \]")
# A plan every sentence of which is planned: "## Capacity plan (H2)", "Rollout plan:", "容量规划：", "上线计划："
_WHOLE_PLAN = re.compile(r"^\W*(?:capacity\s+plan(?:ning)?|rollout\s+plan|deployment\s+plan|launch\s+plan|容量规划|上线计划|发布计划|灰度方案"
                         r"|上线方案)\b\W*", _I)
_BUG_REPORT_HEADING = re.compile(r"^\W*(?:describe\s+the\s+bug|bug\s+(?:report|description)|current\s+behaviou?r|问题描述|问题现象"
                                 r"|the\s+bug)\W*$|^\W*(?:incident|post[\s\-]?mortem|outage|故障复盘|事故)\b", _I)


# "— done, 410 → 290 ms", "with these commits", "once this merges", "(done)", "5% canary — done: 290 ms vs 410 ms in
# control", "~~…~~": an item that says it was done, or sets an arm against another, is read as it stands
_DONE_OR_ARMS = re.compile(r"\b(?:done|completed|finished|shipped|landed|merged|achieved)\b|已完成|完成了|已上线|~~"
                           r"|\bwith\s+(?:these|the|this)\s+(?:commits|changes?|pr|branch|patch)\b|\bonce\s+this\s+(?:merges|lands|is\s+merged)\b"
                           r"|合入后|上线后|\bwith\s+split[\w\-]*|\bthe\s+split\s+route\b|→|->|\bvs\.?\b|\bversus\b|\bmain\b|\bcontrol\b"
                           r"|\bfrom\s+[~≈]?[\d.,]+\s*\S*\s+(?:down\s+|up\s+)?to\s+[~≈]?\d|[从由]\s*[\d.,]+[^，。；]{0,12}?(?:到|至)", _I)
# "Split-KV gives each 8B pod 30% more output tok/s": an effect stated with its amount
_EFFECT = re.compile(r"\b(?:gives?|gave|brings?|brought|takes?|took|makes?|made|cuts?|raises?|lifts?|boosts?|drops?|jumps?)\b"
                     r"|涨到|降到|提到|提升|降低|下降", _I)


def is_plan_label(text: str) -> bool:
    """A plan's label alone on its line ("Roadmap:", "下一步："): the list items under it read as under its heading."""
    return _PLAN_LABEL.match(text) is not None


def planned_item(clause: str, heading: str, sentence: str = "") -> Mood | None:
    """An item under a plan's heading or lead-in ("## Roadmap", "Plan:") that says what to do: no result of this
    change. An item that names the change, says it was done or measured, or sets an arm against another is read as it
    stands."""
    changed = names_this_change(clause) or _DONE_OR_ARMS.search(clause) is not None
    own = changed or says_measured(clause)
    if _BUG_REPORT_HEADING.match(heading) and not own:
        return Mood("a bug report", heading.strip(" #"))  # "### Describe the bug" above what someone saw
    if _TARGET_HEADING.match(heading) and _BOUND_SIGN.search(clause) and not own:
        return Mood("a target", heading.strip(" #"))  # "## Requirements" above "- p99 TTFT <= 800 ms at 40 req/s"
    plan = _WHOLE_PLAN.search(heading) or _WHOLE_PLAN.match(clause) or _WHOLE_PLAN.match(sentence)
    if plan and not changed and not (states_a_change(clause) and _EFFECT.search(clause)):  # it may quote last quarter's load test
        return Mood("a plan", plan.group(0).strip(" #:：-"))  # "## Capacity plan (H2)", "上线计划：先在 10% 流量 …"
    lead = _PLAN_HEADING.match(heading) or _PLAN_HEADING.match(clause)
    if lead is None:
        return None
    if _OPEN_TASK.match(clause) and not own and not _REASON_WITH_RESULT.search(clause):
        return Mood("a plan", lead.group(0).strip(" #:-"))  # "- [ ] disaggregated prefill (goal: halve p99 TTFT)"
    item = clause[lead.end():] if _PLAN_HEADING.match(clause) else clause
    item = re.sub(r"^\W*[:：\-—]\s*", "", item)
    to_do = _TO_DO_ITEM.match(item)
    done = says_done(item, to_do.end()) if to_do else False  # "cut" itself is the item's verb, not its past
    reason = _REASON_WITH_RESULT.search(item) if states_a_change(item) else None
    if to_do and not (own or done or reason):
        return Mood("a plan", lead.group(0).strip(" #:-"))
    return None
