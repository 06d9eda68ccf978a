"""Confirmed when the bad program stops with "a leaf Variable that requires grad is being
used in an in-place operation" and the fixed one runs to completion."""
from confirmlib import Chart, each

MEASURE = "c10::Error thrown"
LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation"


def judge(bad, fixed, device):
    measures = each(bad, fixed, lambda run: {"exit_code": run["exit_code"], "error": run["error"],
                                             "iterations": len(run["iterations"])})
    b, f = measures["bad"], measures["fixed"]
    ok = (b["exit_code"] != 0 and LEAF_ERROR in (b["error"] or "")
          and f["exit_code"] == 0 and f["error"] is None and f["iterations"] > 0)
    text = (f"bad throws c10::Error \"{b['error']}\" (exit {b['exit_code']}); "
            f"fixed runs {f['iterations']} iterations without error")
    return ok, measures, text


def chart(bad, fixed, device):
    # Steps completed so far: an iteration that threw did not complete.
    def completed(run):
        done = [i + 1 for i in range(len(run["iterations"]))]
        return done[:-1] + [done[-1] - 1] if run["error"] and done else done
    return Chart("training steps completed", completed(bad), completed(fixed))
