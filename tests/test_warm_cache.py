"""`python -m validation.warm_cache` compiles each kernel family once before the timed producers run."""

from validation.warm_cache import Job, job_environment, jobs, schedule


def job(name, family):
    return Job(name, ("true",), family=family)


def test_the_first_job_of_each_family_leads_and_the_rest_wait_for_it():
    todo = [job("a-4k", "D128"), job("b-2k", "D64"), job("a-32k", "D128"), job("a-128k", "D128"), job("c", "")]
    leaders, followers = schedule(todo)
    assert [j.name for j in leaders] == ["a-4k", "b-2k", "c"]  # the largest family first
    assert [j.name for j in followers["D128"]] == ["a-32k", "a-128k"]
    assert followers["D64"] == [] and followers["c"] == []


def test_shapes_that_differ_only_in_batch_or_context_share_a_family():
    families = {j.name: j.family for j in jobs(e2e=False)}
    assert families["bench llama8b-b1-4k"] == families["bench llama8b-b1-128k"] == families["bench llama8b-b64-2k"]
    assert families["bench h24kv4d256-b1-20k"] != families["bench h24kv4d256-b1-20k-r16"]  # 16 query rows
    assert families["quantized llama8b-b1-32k"] != families["bench llama8b-b1-32k"]


def test_a_job_caps_the_threads_the_caller_left_unset(monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    env = job_environment(Job("decode loop", ("true",), (("DESIGN_GATES_SPLITKV", "1"),)), jobs=4)
    assert (env["OMP_NUM_THREADS"], env["MKL_NUM_THREADS"], env["TORCHINDUCTOR_COMPILE_THREADS"]) == ("4", "3", "1")
    assert env["DESIGN_GATES_SPLITKV"] == "1"
