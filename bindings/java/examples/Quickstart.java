import dev.filtervm.Filter;
import dev.filtervm.Matches;
import dev.filtervm.Message;
import dev.filtervm.PolicyException;
import dev.filtervm.SubscriptionSet;

public class Quickstart {
    public static void main(String[] args) {
        try (Filter paid = Filter.compile("sns", "{\"event\": [\"order.paid\"], \"amount\": [{\"numeric\": [\">\", 100]}]}", null);
             Filter eu = Filter.compile("stream", "region = eu-*", null);
             SubscriptionSet<String> subscriptions = new SubscriptionSet<>()) {
            Message message = Message.builder()
                    .attribute("event", "order.paid")
                    .attribute("amount", 250)
                    .build();
            System.out.println(paid.matches(message)); // → true

            subscriptions.add("billing", paid);
            subscriptions.add("europe", eu);
            // The stream filter reads headers, which this message has not: its group is
            // unjudged, and billing still gets the message.
            Matches<String> m = subscriptions.matching(message);
            System.out.println(m.ids()); // → [billing]
            System.out.println(m.unjudged().get(0).code()); // → MESSAGE_SHAPE

            try {
                Filter.compile("sns", "{\"amount\": [{\"numeric\": [\">\"]}]}", null);
            } catch (PolicyException e) {
                System.out.println(e.code() + " at " + e.pointer()); // → SNS_TYPE_ERROR at /amount/0/numeric
            }
        }
    }
}
