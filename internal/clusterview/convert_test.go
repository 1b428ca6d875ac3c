package clusterview

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEndpointsOf(t *testing.T) {
	t.Parallel()
	slice := func(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, Endpoints: eps}
	}
	ep := func(ip, pod string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: pod}}
	}
	got := endpointsOf("db", []*discoveryv1.EndpointSlice{
		slice("db-ro", ep("10.0.0.3", "db-2", true), ep("10.0.0.2", "db-1", false)),
		slice("other", ep("10.0.0.9", "x", true)),
	})
	want := []Endpoint{
		{Service: "db-rw", Addresses: []Address{}},
		{Service: "db-ro", Addresses: []Address{{IP: "10.0.0.2", Pod: "db-1"}, {IP: "10.0.0.3", Pod: "db-2", Ready: true}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestEventsOf(t *testing.T) {
	t.Parallel()
	at := func(s int) time.Time { return time.Date(2026, 1, 2, 3, 4, s, 0, time.UTC) }
	evs := []*corev1.Event{
		{Reason: "Old", LastTimestamp: metav1.NewTime(at(1)), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "db-0"}},
		{Reason: "Series", EventTime: metav1.NewMicroTime(at(0)), Series: &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(at(9))}},
		{Reason: "Micro", EventTime: metav1.NewMicroTime(at(5))},
	}
	got := eventsOf(evs, 2)
	if len(got) != 2 || got[0].Reason != "Series" || got[1].Reason != "Micro" || !got[0].Time.Equal(at(9)) {
		t.Errorf("got %+v, want Series then Micro, the newest two", got)
	}
	if got := eventsOf(evs, 5); len(got) != 3 || got[2].Object != "Pod/db-0" {
		t.Errorf("got %+v, want all three, Pod/db-0 last", got)
	}
}
