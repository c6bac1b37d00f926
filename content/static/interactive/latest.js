// Latest wins: the one way the interactive figures turn a change into a result.

/**
 * latestWins(task, {show, fail, busy}) returns request(). Each request() asks for `task`
 * (an async function reading the figure's current inputs) to run. At most one run is in
 * flight; requests made meanwhile collapse into one more run after it; a run's outcome
 * reaches show(value) or fail(error) only if no newer request came while it ran, so an
 * old, slow reply never overwrites a newer result. A run rejected with error.retry (Python
 * was restarted for another figure's sake) runs once more by itself. busy(true/false)
 * brackets the runs. request() resolves once the figure shows its newest inputs.
 */
export function latestWins(task, { show, fail = () => {}, busy = () => {} }) {
  let asked = 0;
  let running = null;

  async function loop() {
    busy(true);
    try {
      let done = 0;
      while (done < asked) {
        const ticket = asked;
        let outcome;
        for (let attempt = 0; ; attempt++) {
          try {
            outcome = { value: await task() };
          } catch (error) {
            if (error && error.retry && attempt === 0 && ticket === asked) continue;
            outcome = { error };
          }
          break;
        }
        done = ticket;
        if (ticket !== asked) continue;  // stale: a newer request is waiting for its own run
        try {
          if ("error" in outcome) fail(outcome.error);
          else show(outcome.value);
        } catch (error) {
          fail(error);
        }
      }
    } finally {
      running = null;
      busy(false);
    }
  }

  return function request() {
    asked += 1;
    if (!running) running = loop();
    return running;
  };
}
