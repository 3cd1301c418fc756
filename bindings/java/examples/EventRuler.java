import dev.filtervm.Machine;
import dev.filtervm.Ruler;
import java.util.List;

public class EventRuler {
    public static void main(String[] args) throws Exception {
        String event = "{\"source\": \"aws.ec2\", \"detail\": {\"state\": \"terminated\", \"cpu\": 92.5}}";
        try (Machine machine = new Machine()) {
            machine.addRule("terminated", "{\"source\": [\"aws.ec2\"], \"detail\": {\"state\": [\"terminated\"]}}");
            machine.addRule("hot", "{\"detail\": {\"cpu\": [{\"numeric\": [\">\", 90]}]}}");
            machine.addRule("hot", "{\"detail\": {\"temperature\": [{\"numeric\": [\">\", 80]}]}}");
            List<String> rules = machine.rulesForJSONEvent(event);
            System.out.println(rules); // → [terminated, hot]
            machine.deleteRule("hot", "{\"detail\": {\"cpu\": [{\"numeric\": [\">\", 90]}]}}");
            System.out.println(machine.rulesForJSONEvent(event)); // → [terminated]
        }
        System.out.println(Ruler.matchesRule(event, "{\"detail\": {\"state\": [{\"prefix\": \"term\"}]}}")); // → true
    }
}
