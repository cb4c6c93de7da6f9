# A stand-in for gr00t.policy.policy.BasePolicy: get_action checks the
# observation and the action when strict, around _get_action.
class BasePolicy:
    def __init__(self, strict: bool = True):
        self.strict = strict

    def get_action(self, observation, options=None):
        if self.strict:
            self.check_observation(observation)
        action, info = self._get_action(observation, options)
        if self.strict:
            self.check_action(action)
        return action, info
